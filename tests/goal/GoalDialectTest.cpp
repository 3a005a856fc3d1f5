// The extension point for the extended GOAL dialect: a new operation keyword and a
// declaration, written only with TextParser's public toolkit, parse alongside the
// plain statements (labels, dependencies, errors all shared).
#include "tests/goal/GoalTestUtil.h"

#include "compiler/frontends/goal/GoalTextParser.h"
#include "support/Diagnostics.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::goal;

namespace {

// `comm <id> size <n>`: a toy declaration that only checks its syntax.
int declared = 0;
bool parseComm(TextParser &p, const char *) {
  uint64_t id, size;
  if (!p.parseNumber(id, "communicator id", 1000) || !p.expect("size", "after the id") ||
      !p.parseNumber(size, "communicator size", p.numRanks()))
    return false;
  ++declared;
  return p.endStatement([] { return std::string("the end of the line"); });
}

// `barrier <ns> [cpu C]`: a toy operation, stored as a calc.
bool parseBarrier(TextParser &p, const OpStatement &st) {
  uint64_t ns;
  if (!p.parseNumber(ns, "barrier duration", UINT64_MAX))
    return false;
  Clause clauses[] = {{.keyword = "cpu", .max = 3, .what = "cpu index"}};
  if (!p.parseClauses(clauses))
    return false;
  p.addOp(st, OpKind::Calc, 0, ns, 0, static_cast<uint32_t>(clauses[0].value), 0);
  return true;
}

Dialect extended() {
  Dialect d = Dialect::plain();
  d.ops.push_back({"barrier", parseBarrier});
  d.declarations.push_back({"comm", parseComm});
  return d;
}

test::Parsed parseWith(const Dialect &d, const std::string &text) {
  test::Parsed r;
  llvm::raw_string_ostream os(r.diags);
  DiagEngine diags(os);
  diags.setErrorLimit(0);
  unsigned id = diags.addBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "e.goal"));
  r.schedule = TextParser(diags, id, d).parse();
  os.flush();
  return r;
}

} // namespace

TEST(GoalDialect, NewOperationsAndDeclarationsPlugIn) {
  Dialect d = extended();
  declared = 0;
  test::Parsed p = parseWith(d, "num_ranks 2\ncomm 1 size 2 // all\ncomm 2 size 1\n"
                                "rank 0 {\nl1: send 8b to 1\nl2: barrier 300 cpu 2\n"
                                "l2 requires l1\nbarrier 5\n}\nrank 1 {\nl1: recv 8b from 0\n}\n");
  ASSERT_TRUE(p.schedule) << p.diags;
  EXPECT_EQ(declared, 2);
  EXPECT_EQ(test::describe(*p.schedule),
            "r0 #0 l1 send peer=1 size=8 tag=0 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 l2 calc peer=0 size=300 tag=0 cpu=2 nic=0 succ=[]\n"
            "r0 #2 - calc peer=0 size=5 tag=0 cpu=0 nic=0 succ=[]\n"
            "r1 #0 l1 recv peer=0 size=8 tag=0 cpu=0 nic=0 succ=[]\n");
  // The shared messages name the new keyword.
  p = parseWith(d, "num_ranks 1\ncomm 1 size 9\nrank 0 {\nl1: barier 3\nl2: barrier 3 cpu 4\n}\n");
  EXPECT_EQ(test::messageLines(p.diags),
            (std::vector<std::string>{
                "e.goal:2:13: error: communicator size 9 is too large (at most 1)",
                "e.goal:4:5: error: expected an operation after 'l1:' ('send', 'recv', 'calc' or "
                "'barrier'), found 'barier'",
                "e.goal:5:19: error: cpu index 4 is too large (at most 3)"}));
  // The plain dialect does not know them.
  p = parseWith(Dialect::plain(), "num_ranks 1\ncomm 1 size 1\nrank 0 {\n}\n");
  EXPECT_EQ(test::messageLines(p.diags),
            std::vector<std::string>{"e.goal:2:1: error: expected 'rank <n> {', found 'comm'; "
                                     "statements belong inside a rank block"});
}
