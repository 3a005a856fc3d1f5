// Every error of the GOAL text reader, with its exact text and position. Columns are
// counted by hand from the input strings (1-based).
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

std::vector<std::string> errors(const std::string &text) {
  Parsed p = parseGoalText(text);
  EXPECT_FALSE(p.schedule.has_value());
  return messageLines(p.diags);
}

using Lines = std::vector<std::string>;

// A file with two ranks whose rank 0 block holds `line` (line 3 of the file).
std::string inRank0(const std::string &line) {
  return "num_ranks 2\nrank 0 {\n" + line + "\n}\nrank 1 {\n}\n";
}

std::string firstError(const std::string &text) {
  Lines l = errors(text);
  return l.empty() ? "<no error>" : l.front();
}

} // namespace

TEST(GoalErrors, Header) {
  EXPECT_EQ(errors(""),
            Lines{"t.goal:1:1: error: empty GOAL file: expected 'num_ranks <n>' followed by the "
                  "rank blocks"});
  EXPECT_EQ(errors("rank 0 {\n}\n"),
            Lines{"t.goal:1:1: error: expected 'num_ranks <n>' at the start of a GOAL file, "
                  "found 'rank'"});
  EXPECT_EQ(errors("num_ranks\nrank 0 {\n}\n"),
            Lines{"t.goal:1:10: error: expected a number (number of ranks), found the end of "
                  "the line"});
  EXPECT_EQ(errors("num_ranks 0\n"), Lines{"t.goal:1:11: error: num_ranks must be at least 1"});
  EXPECT_EQ(errors("num_ranks 4294967296\n"),
            Lines{"t.goal:1:11: error: number of ranks 4294967296 is too large (at most "
                  "4294967295)"});
  EXPECT_EQ(errors("num_ranks 2 x\nrank 0 {\n}\nrank 1 {\n}\n"),
            Lines{"t.goal:1:13: error: expected the end of the line after 'num_ranks 2', "
                  "found 'x'"});
}

TEST(GoalErrors, TopLevel) {
  EXPECT_EQ(errors("num_ranks 1\nl1: calc 5\nrank 0 {\n}\n"),
            Lines{"t.goal:2:1: error: expected 'rank <n> {', found 'l1'; statements belong "
                  "inside a rank block"});
  EXPECT_EQ(errors("num_ranks 1\nrank 0 {\n}\nnum_ranks 1\n"),
            Lines{"t.goal:4:1: error: 'num_ranks' appears a second time; it belongs once at the "
                  "start of the file"});
  EXPECT_EQ(errors("num_ranks 1\n}\nrank 0 {\n}\n"),
            Lines{"t.goal:2:1: error: '}' without an open rank block"});
  // Several errors in one run; the rank block that could not be read is missing.
  EXPECT_EQ(errors("num_ranks 1\nrank {\n}\n"),
            (Lines{"t.goal:2:6: error: expected a number (rank number), found '{'",
                   "t.goal:3:1: error: '}' without an open rank block",
                   "t.goal:1:1: error: num_ranks is 1 but rank 0 has no block (an empty block "
                   "is 'rank <n> {}')"}));
  EXPECT_EQ(errors("num_ranks 1\nrank 0\n}\n"),
            Lines{"t.goal:2:7: error: expected '{' after 'rank 0', found the end of the line"});
}

TEST(GoalErrors, RankBlocks) {
  EXPECT_EQ(errors("num_ranks 2\nrank 5 {\n}\n"),
            (Lines{"t.goal:2:6: error: rank 5 is out of range: num_ranks is 2, so rank blocks "
                   "are 0..1",
                   "t.goal:1:1: error: num_ranks is 2 but ranks 0..1 have no block (an empty "
                   "block is 'rank <n> {}')"}));
  EXPECT_EQ(errors("num_ranks 2\nrank 0 {\n}\nrank 0 {\n}\nrank 1 {\n}\n"),
            Lines{"t.goal:4:6: error: a second block for rank 0; each rank has one block, in "
                  "order 0, 1, ..., 1"});
  // A swap is reported once, where the order breaks.
  EXPECT_EQ(errors("num_ranks 3\nrank 1 {\n}\nrank 0 {\n}\nrank 2 {\n}\n"),
            Lines{"t.goal:2:6: error: the block of rank 1 comes before the block of rank 0; rank "
                  "blocks must appear in order 0, 1, ..., 2"});
  EXPECT_EQ(errors("num_ranks 3\nrank 0 {\n}\n"),
            Lines{"t.goal:1:1: error: num_ranks is 3 but ranks 1..2 have no block (an empty "
                  "block is 'rank <n> {}')"});
  EXPECT_EQ(errors("num_ranks 6\nrank 0 {\n}\nrank 3 {\n}\nrank 4 {\n}\n"),
            (Lines{"t.goal:4:6: error: the block of rank 3 comes before the block of rank 1; "
                   "rank blocks must appear in order 0, 1, ..., 5",
                   "t.goal:1:1: error: num_ranks is 6 but ranks 1..2, 5 have no block (an empty "
                   "block is 'rank <n> {}')"}));
  EXPECT_EQ(errors("num_ranks 2\nrank 0 {\n}\nrank 1 {\nl1: calc 1\n"),
            Lines{"t.goal:4:1: error: the block of rank 1 is not closed: '}' is missing before "
                  "the end of the file"});
  EXPECT_EQ(errors("num_ranks 2\nrank 0 {\nl1: calc 1\nrank 1 {\n}\n"),
            Lines{"t.goal:4:1: error: 'rank' inside the block of rank 0: is the '}' of rank 0 "
                  "missing?"});
  EXPECT_EQ(errors(inRank0("num_ranks 1")),
            Lines{"t.goal:3:1: error: 'num_ranks' belongs once at the start of the file, not "
                  "inside a rank block"});
}

TEST(GoalErrors, StatementStart) {
  EXPECT_EQ(errors(inRank0("5: calc 1")),
            Lines{"t.goal:3:1: error: expected a statement ('<label>: send|recv|calc ...' or "
                  "'<label> requires <label>') or '}', found '5'"});
  EXPECT_EQ(errors(inRank0("l1: sned 1b to 0")),
            Lines{"t.goal:3:5: error: expected an operation after 'l1:' ('send', 'recv' or "
                  "'calc'), found 'sned'"});
  EXPECT_EQ(errors(inRank0("l1 calc 1")),
            Lines{"t.goal:3:4: error: expected ':' or 'requires'/'irequires' after the label "
                  "'l1', found 'calc'"});
  EXPECT_EQ(errors(inRank0("send8b to 1")),
            Lines{"t.goal:3:8: error: expected ':' or 'requires'/'irequires' after the label "
                  "'send8b', found 'to' ('send8b' is read as a label; write 'send 8b')"});
  EXPECT_EQ(errors(inRank0("\xff")),
            Lines{"t.goal:3:1: error: expected a statement ('<label>: send|recv|calc ...' or "
                  "'<label> requires <label>') or '}', found byte 0xff"});
  EXPECT_EQ(errors(inRank0(std::string("\0", 1))),
            Lines{"t.goal:3:1: error: expected a statement ('<label>: send|recv|calc ...' or "
                  "'<label> requires <label>') or '}', found a NUL byte"});
}

TEST(GoalErrors, Dependencies) {
  EXPECT_EQ(errors(inRank0("l1: calc 1\nl1 requires")),
            Lines{"t.goal:4:12: error: expected a label after 'requires', found the end of the "
                  "line"});
  EXPECT_EQ(errors(inRank0("l1: calc 1\nl2: calc 2\nl2 requires l1 l3")),
            Lines{"t.goal:5:16: error: expected the end of the line after 'l2 requires l1', "
                  "found 'l3'"});
  EXPECT_EQ(errors(inRank0("l1: calc 1\nl1 requires l2\nl3 irequires l1")),
            (Lines{"t.goal:4:13: error: no operation in rank 0 is labelled 'l2'",
                   "t.goal:5:1: error: no operation in rank 0 is labelled 'l3'"}));
  // Labels do not cross rank blocks.
  EXPECT_EQ(errors("num_ranks 2\nrank 0 {\nx: calc 1\n}\nrank 1 {\ny: calc 1\ny requires x\n}\n"),
            Lines{"t.goal:7:12: error: no operation in rank 1 is labelled 'x'"});
}

TEST(GoalErrors, DuplicateLabels) {
  EXPECT_EQ(errors(inRank0("l1: calc 1\nl1: calc 2")),
            (Lines{"t.goal:4:1: error: label 'l1' is already used in rank 0; labels must be "
                   "unique within a rank block",
                   "t.goal:3:1: note: 'l1' was first defined here"}));
  EXPECT_EQ(errors(inRank0("xy: calc 1\nl2: calc 2\n  xy : send 1b to 1")),
            (Lines{"t.goal:5:3: error: label 'xy' is already used in rank 0; labels must be "
                   "unique within a rank block",
                   "t.goal:3:1: note: 'xy' was first defined here"}));
}

TEST(GoalErrors, SendAndRecvOperands) {
  EXPECT_EQ(firstError(inRank0("l1: send b to 1")),
            "t.goal:3:10: error: expected a number (message size), found 'b'");
  EXPECT_EQ(firstError(inRank0("l1: send 18446744073709551616b to 1")),
            "t.goal:3:10: error: message size 18446744073709551616 is too large (at most "
            "18446744073709551615)");
  EXPECT_EQ(firstError(inRank0("l1: send 8 to 1")),
            "t.goal:3:12: error: expected 'b' after the message size (sizes are written like "
            "1024b), found 'to'");
  EXPECT_EQ(firstError(inRank0("l1: send 8b 1")),
            "t.goal:3:13: error: expected 'to' after the size: send <bytes>b to <rank>, found "
            "'1'");
  EXPECT_EQ(firstError(inRank0("l1: recv 8b to 1")),
            "t.goal:3:13: error: expected 'from' after the size: recv <bytes>b from <rank|-1>, "
            "found 'to'");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to -1")),
            "t.goal:3:16: error: destination rank cannot be -1: only a recv's source may be -1 "
            "(any source)");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 2")),
            "t.goal:3:16: error: destination rank 2 is out of range: num_ranks is 2, so ranks "
            "are 0..1");
  EXPECT_EQ(firstError(inRank0("l1: recv 8b from 99999999999999999999")),
            "t.goal:3:18: error: source rank 99999999999999999999 is out of range: num_ranks is "
            "2, so ranks are 0..1");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to x")),
            "t.goal:3:16: error: expected a number (destination rank), found 'x'");
}

TEST(GoalErrors, Clauses) {
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 1 tag 4294967295")),
            "t.goal:3:22: error: tag 4294967295 is too large (at most 4294967294; -1 means any "
            "tag)");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 1 tag cpu 1")),
            "t.goal:3:22: error: expected a number (tag), found 'cpu'");
  EXPECT_EQ(firstError(inRank0("l1: calc 1 cpu 65536")),
            "t.goal:3:16: error: cpu index 65536 is too large (at most 65535)");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 1 nic 65536")),
            "t.goal:3:22: error: nic index 65536 is too large (at most 65535)");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 1 nic 1 cpu 1")),
            "t.goal:3:24: error: 'cpu' must come before 'nic' (clauses go in the order tag, cpu, "
            "nic)");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 1 tag 1 tag 2")),
            "t.goal:3:24: error: 'tag' is given twice");
  EXPECT_EQ(firstError(inRank0("l1: send 8b to 1 size 4")),
            "t.goal:3:18: error: expected 'tag', 'cpu', 'nic' or the end of the line, found "
            "'size'");
  EXPECT_EQ(firstError(inRank0("l1: calc 5 nic 1")),
            "t.goal:3:12: error: expected 'cpu' or the end of the line, found 'nic'");
  EXPECT_EQ(firstError(inRank0("l1: calc 5b")),
            "t.goal:3:11: error: expected 'cpu' or the end of the line, found 'b'");
  EXPECT_EQ(firstError(inRank0("l1: calc 5 }")),
            "t.goal:3:12: error: expected 'cpu' or the end of the line, found '}'");
  EXPECT_EQ(firstError(inRank0("l1: calc")),
            "t.goal:3:9: error: expected a number (calc duration), found the end of the line");
}

TEST(GoalErrors, CommentsAndLineEnds) {
  EXPECT_EQ(errors("num_ranks 1\nrank 0 {\n/* open\n}\n"),
            (Lines{"t.goal:3:1: error: unterminated comment: '/*' without a closing '*/'",
                   "t.goal:2:1: error: the block of rank 0 is not closed: '}' is missing before "
                   "the end of the file"}));
  EXPECT_EQ(firstError("num_ranks 1\rrank 0 {\n}\n"),
            "t.goal:1:12: error: expected the end of the line after 'num_ranks 1', found a "
            "carriage return");
}

TEST(GoalErrors, SeveralErrorsAndRecovery) {
  // Each bad statement is reported and skipped; a label defined by a bad statement
  // still counts, so `l2 requires l1` adds nothing more.
  EXPECT_EQ(errors("num_ranks 2\nrank 0 {\nl1: send 8b to 7\nl2: calc x\nl2 requires l1\n"
                   "l3: calc 1 cpu 1 cpu 2\n}\nrank 1 {\n}\n"),
            (Lines{"t.goal:3:16: error: destination rank 7 is out of range: num_ranks is 2, so "
                   "ranks are 0..1",
                   "t.goal:4:10: error: expected a number (calc duration), found 'x'",
                   "t.goal:6:18: error: 'cpu' is given twice"}));
}

TEST(GoalErrors, MessageShowsTheLineAndACaret) {
  Parsed p = parseGoalText(inRank0("  l1: send 8b to 9 tag 1"));
  EXPECT_EQ(p.diags, "t.goal:3:18: error: destination rank 9 is out of range: num_ranks is 2, "
                     "so ranks are 0..1\n"
                     "  l1: send 8b to 9 tag 1\n"
                     "                 ^\n");
}

TEST(GoalErrors, DriverExitStatusAndErrorLimit) {
  std::string dir = makeTempDir("goal-errors");
  std::string text = "num_ranks 2\nrank 0 {\n";
  for (int i = 0; i < 30; ++i)
    text += "l" + std::to_string(i) + ": send 1b to 5\n";
  text += "}\nrank 1 {\n}\n";
  writeFile(dir + "/bad.goal", text);
  RunResult r = runInfracc({dir + "/bad.goal", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  size_t errorsShown = 0;
  for (size_t at = r.err.find(": error: "); at != std::string::npos;
       at = r.err.find(": error: ", at + 1))
    ++errorsShown;
  EXPECT_EQ(errorsShown, 20u);   // the default -error-limit
  EXPECT_NE(r.err.find("infracc: note: too many errors (limit 20, see -error-limit); stopping "
                       "here\n"),
            std::string::npos);
}
