// Every kind of picture goes through Graphviz without a single error or warning, in
// each output format; and what Graphviz does say is caught and reported.
#include "visualize/FabricView.h"
#include "visualize/ScheduleView.h"

#include "tests/visualize/TestFabrics.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::viz;
using namespace infracc::test;

namespace {

void expectRenders(llvm::Expected<Drawing> d) {
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  for (const char *format : {"dot", "svg", "png", "pdf"}) {
    auto out = render(*d, format);
    ASSERT_TRUE(bool(out)) << format << ": " << llvm::toString(out.takeError());
    llvm::StringRef s(*out);
    if (llvm::StringRef(format) == "dot")
      EXPECT_TRUE(s.starts_with("digraph ")) << s.take_front(40).str();
    else if (llvm::StringRef(format) == "svg")
      EXPECT_TRUE(s.contains("<svg ") && s.rtrim().ends_with("</svg>")) << s.take_front(200).str();
    else if (llvm::StringRef(format) == "png")
      EXPECT_TRUE(s.starts_with("\x89PNG\r\n\x1a\n"));
    else
      EXPECT_TRUE(s.starts_with("%PDF-"));
  }
}

Schedule pingPong() {
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto s = b.addSend(1024, 1, 7);
  auto r = b.addRecv(1024, 1, 7);
  b.addDependency(r, s, DepKind::IRequires);
  b.endRank();
  b.beginRank(1);
  auto r1 = b.addRecv(1024, 0, 7);
  auto c = b.addCalc(500);
  auto s1 = b.addSend(1024, 0, 7);
  b.addDependency(c, r1, DepKind::Requires);
  b.addDependency(s1, c, DepKind::Requires);
  b.endRank();
  return b.finish();
}

} // namespace

TEST(Render, OverviewInEveryFormat) { expectRenders(drawOverview(*expand(leafSpine(4, 2, 4)), {})); }

TEST(Render, SummarisedOverviewInEveryFormat) {
  expectRenders(drawOverview(*expand(leafSpine(32, 16, 32)), {}));
}

TEST(Render, DirectNetworkInEveryFormat) { expectRenders(drawOverview(*expand(torus2d(4, 4)), {})); }

TEST(Render, DeviceViewInEveryFormat) {
  expectRenders(drawDevice(*expand(composedFabric()), "hgx", {}));
}

TEST(Render, FullViewInEveryFormat) { expectRenders(drawFull(*expand(composedFabric()), {})); }

TEST(Render, ScheduleInEveryFormat) { expectRenders(drawSchedule(pingPong(), {})); }

TEST(Render, GraphvizMessagesAreErrors) {
  Drawing d;
  d.name = "broken";
  d.addNode("a", {{"label", "<B>unclosed", true}});
  auto out = render(d, "svg");
  ASSERT_FALSE(bool(out));
  std::string msg = llvm::toString(out.takeError());
  EXPECT_TRUE(llvm::StringRef(msg).starts_with("Graphviz failed to lay out the drawing with 'dot': "))
      << msg;
  // What Graphviz 2.43 said is passed on.
  EXPECT_NE(msg.find("Error: mismatched tag in line 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in label of node a"), std::string::npos) << msg;
  // The hook is reset: the next drawing renders cleanly.
  Drawing ok;
  ok.name = "fine";
  ok.addNode("a", {});
  EXPECT_TRUE(bool(render(ok, "svg")));
}

TEST(Render, UnknownFormat) {
  Drawing d;
  auto out = render(d, "gif");
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(llvm::toString(out.takeError()), "unknown picture format 'gif' (valid: dot, svg, png, pdf)");
}
