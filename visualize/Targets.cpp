// -emit=dot|svg|png|pdf: pictures of the fabric (overview, device internals, every
// node) or of the schedule, rendered in-process by Graphviz.
#include "backends/infragraph/Digest.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"
#include "visualize/FabricView.h"
#include "visualize/ScheduleView.h"

#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>

#include <fmt/format.h>

namespace infracc::viz {
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> View(
    "view", cl::value_desc("overview|device:NAME|full|schedule"),
    cl::desc("What -emit=dot/svg/png/pdf draws: overview (one node per device copy, tiers "
             "stacked; the default with a fabric), device:NAME (one device's components), full "
             "(every fabric node), schedule (the workload's ops; the default without a fabric)"),
    cl::cat(opts::fabricCategory()));

cl::opt<Aggregation> Aggregate(
    "aggregate", cl::desc("How the overview summarises large fabrics (default auto)"),
    cl::values(clEnumValN(Aggregation::Auto, "auto",
                          "the finest level with at most 100 nodes, 250 edges and 32 nodes per tier"),
               clEnumValN(Aggregation::None, "none", "one node per device copy"),
               clEnumValN(Aggregation::Hosts, "hosts",
                          "hosts with the same neighbours share a node"),
               clEnumValN(Aggregation::Switches, "switches",
                          "hosts attached to one switch are drawn inside its node"),
               clEnumValN(Aggregation::Classes, "classes",
                          "device copies of equal structure share a node")),
    cl::init(Aggregation::Auto), cl::cat(opts::fabricCategory()));

cl::opt<unsigned> MaxNodes("max-nodes", cl::init(1000), cl::value_desc("n"),
                           cl::desc("Largest fabric picture in nodes: -view=full and a forced "
                                    "-aggregate level fall back to the overview above it, other "
                                    "views are refused (default 1000)"),
                           cl::cat(opts::fabricCategory()));

cl::opt<unsigned> MaxOps("max-ops", cl::init(2000), cl::value_desc("n"),
                         cl::desc("Refuse to draw a schedule with more ops than this (default "
                                  "2000)"),
                         cl::cat(opts::fabricCategory()));

llvm::Expected<Drawing> chooseDrawing(const Module &m) {
  llvm::StringRef view = View;
  if (view.empty())
    view = m.hasFabric() ? "overview" : "schedule";
  if (view == "schedule") {
    if (!m.hasSchedule())
      return usageError("-view=schedule needs a workload (e.g. a .goal file)");
    ScheduleViewOptions so;
    so.maxOps = MaxOps;
    so.title = m.workloadSource.empty()
                   ? std::string("schedule")
                   : std::string(llvm::sys::path::filename(m.workloadSource));
    return drawSchedule(*m.schedule, so);
  }
  bool known = view == "overview" || view == "full" || view.starts_with("device:");
  if (!known)
    return usageError("unknown view '" + view +
                      "' for -view; valid views are: overview, device:NAME, full, schedule");
  if (!m.hasFabric())
    return usageError("-view=" + view + " needs a fabric (an InfraGraph .yaml/.json file or "
                      "-fabric=<blueprint>)");
  FabricViewOptions fo;
  fo.aggregate = Aggregate;
  fo.maxNodes = MaxNodes;
  fo.digest = "sha256:" + fabricDigest(*m.fabric);
  if (view == "overview")
    return drawOverview(*m.fabric, fo);
  if (view == "full")
    return drawFull(*m.fabric, fo);
  llvm::StringRef device = view.drop_front(strlen("device:"));
  if (device.empty())
    return usageError("-view=device: needs a device name, e.g. -view=device:server");
  return drawDevice(*m.fabric, device, fo);
}

llvm::Error emitPicture(TargetContext &ctx, llvm::StringRef format) {
  bool binary = format == "png" || format == "pdf";
  if (binary && ctx.output.toStdout() && llvm::sys::Process::StandardOutIsDisplayed())
    return usageError(fmt::format("-emit={} writes binary data and standard output is a "
                                  "terminal; name a file with -o (e.g. -o picture.{})",
                                  format.str(), format.str()));
  auto drawing = chooseDrawing(ctx.module);
  if (!drawing)
    return drawing.takeError();
  if (!drawing->fallbackNote.empty())
    ctx.diags.warning("", drawing->fallbackNote);
  auto data = render(*drawing, format);
  if (!data)
    return data.takeError();
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  *os << *data;
  return llvm::Error::success();
}

Target pictureTarget(const char *format, const char *description) {
  Target t;
  t.name = format;
  t.description = description;
  t.needs = TargetNeeds::FabricOrWorkload;
  std::string f = format;
  t.run = [f](TargetContext &ctx) { return emitPicture(ctx, f); };
  return t;
}

RegisterTarget Dot(pictureTarget("dot", "picture as Graphviz DOT (see -view; no layout)"));
RegisterTarget Svg(pictureTarget("svg", "picture as SVG (see -view)"));
RegisterTarget Png(pictureTarget("png", "picture as PNG (see -view; needs -o on a terminal)"));
RegisterTarget Pdf(pictureTarget("pdf", "picture as PDF (see -view; needs -o on a terminal)"));

} // namespace
} // namespace infracc::viz
