#include "tests/support/TestSchedules.h"

namespace infracc::test {

Schedule nbp2p() {
  ScheduleBuilder b(2);
  for (uint32_t r = 0; r < 2; ++r) {
    b.beginRank(r);
    auto l1 = b.addCalc(1);
    auto l2 = r == 0 ? b.addSend(1, 1) : b.addRecv(1, 0);
    auto l3 = b.addCalc(2);
    auto l4 = b.addCalc(3);
    b.addDependency(l2, l1, DepKind::Requires);
    b.addDependency(l3, l2, DepKind::IRequires);
    b.addDependency(l4, l2, DepKind::Requires);
    b.addDependency(l4, l3, DepKind::Requires);
    b.endRank();
  }
  return b.finish();
}

} // namespace infracc::test
