// Small schedules that tests of several components share.
#pragma once

#include "ir/Schedule.h"

namespace infracc::test {

// test-nbp2p of spcl/LogGOPSim2 (reference notes §1.4a): on each of two ranks l1 calc 1,
// l2 send (rank 0) / recv (rank 1) of 1 byte, l3 calc 2, l4 calc 3; l2 requires l1,
// l3 irequires l2, l4 requires l2 and l3.
Schedule nbp2p();

} // namespace infracc::test
