#include "tests/goal/GoalTestUtil.h"

#include "backends/goal/GoalWriter.h"
#include "compiler/frontends/goal/GoalTextParser.h"
#include "support/Diagnostics.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <sstream>

namespace infracc::test {

Parsed parseGoalText(const std::string &text, const std::string &name, bool extended) {
  Parsed r;
  llvm::raw_string_ostream os(r.diags);
  DiagEngine diags(os);
  diags.setErrorLimit(0);
  unsigned id = diags.addBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name));
  r.schedule =
      goal::TextParser(diags, id, extended ? goal::Dialect::extended() : goal::Dialect::plain())
          .parse();
  os.flush();
  return r;
}

std::vector<std::string> messageLines(const std::string &diags) {
  std::vector<std::string> out;
  std::istringstream in(diags);
  std::string line;
  while (std::getline(in, line))
    if (line.find(": error: ") != std::string::npos || line.find(": note: ") != std::string::npos ||
        line.find(": warning: ") != std::string::npos)
      out.push_back(line);
  return out;
}

std::string describe(const Schedule &s) {
  std::string out;
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    for (uint32_t i = 0; i < s.numOps(r); ++i) {
      uint32_t g = s.globalIndex(r, i);
      out += "r" + std::to_string(r) + " #" + std::to_string(i) + " " +
             (s.label(g).empty() ? "-" : s.label(g)) + " " + opKindName(s.kind(g)).str() +
             " peer=" + (s.peer(g) == AnySource ? "any" : std::to_string(s.peer(g))) +
             " size=" + std::to_string(s.size(g)) +
             " tag=" + (s.tag(g) == AnyTag ? "any" : std::to_string(s.tag(g))) +
             " cpu=" + std::to_string(s.cpu(g)) + " nic=" + std::to_string(s.nic(g)) + " succ=[";
      for (uint32_t k = 0; k < s.numSuccessors(g); ++k) {
        if (k)
          out += ",";
        out += std::to_string(s.successor(g, k));
        if (s.successorKind(g, k) == DepKind::IRequires)
          out += "i";
      }
      out += "]\n";
    }
  }
  return out;
}

std::string toBinary(const Schedule &s) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  goal::writeBinary(s, os);
  os.flush();
  return bytes;
}

std::string ringAllreduceText(unsigned ranks, unsigned iterations, uint64_t bytes) {
  std::string t = "num_ranks " + std::to_string(ranks) + "\n";
  unsigned steps = 2 * (ranks - 1) * iterations;
  for (unsigned r = 0; r < ranks; ++r) {
    t += "\nrank " + std::to_string(r) + " {\n";
    unsigned l = 0;
    for (unsigned k = 0; k < steps; ++k) {
      unsigned send = ++l, recv = ++l, calc = ++l;
      t += "l" + std::to_string(send) + ": send " + std::to_string(bytes) + "b to " +
           std::to_string((r + 1) % ranks) + " tag " + std::to_string(k) + "\n";
      if (k)
        t += "l" + std::to_string(send) + " requires l" + std::to_string(send - 1) + "\n";
      t += "l" + std::to_string(recv) + ": recv " + std::to_string(bytes) + "b from " +
           std::to_string((r + ranks - 1) % ranks) + " tag " + std::to_string(k) + "\n";
      t += "l" + std::to_string(calc) + ": calc 1200\n";
      t += "l" + std::to_string(calc) + " requires l" + std::to_string(recv) + "\n";
    }
    t += "}\n";
  }
  return t;
}

} // namespace infracc::test
