// libFuzzer targets, one per input format. Each runs the whole driver on the fuzzer's
// bytes, as a user would run infracc on a file: the frontend, the verifier and the
// default pipeline, then a cheap target (the simulator for workloads, the digest for
// fabrics). A finding is a crash, a sanitizer report, a leak, a hang past libFuzzer's
// -timeout or an allocation past its -malloc_limit_mb; a clean error message is not.
//
// One binary holds them all; it is run through a link named fuzz-<target> (CMakeLists.txt
// makes one per target), and that name picks the target. docs/reliability.md tells how to
// run them.
#include "compiler/Driver.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

// Fixed companions for the targets that fuzz a side file (-jobs, -place-map).
const char *const Fabric = R"(name: fuzz-pair
devices:
- name: box
  components:
  - {name: xpu, count: 2, choice: xpu}
  - {name: nic, count: 1, choice: nic}
  links:
  - name: pcie
  edges:
  - {ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many, link: pcie}
- name: sw
  components:
  - {name: asic, count: 1, choice: switch}
  - {name: port, count: 2, choice: port}
  links:
  - name: ic
  edges:
  - {ep1: {component: asic}, ep2: {component: port}, scheme: many2many, link: ic}
links:
- name: eth
instances:
- {name: box, device: box, count: 2}
- {name: sw, device: sw, count: 1}
edges:
- {ep1: {instance: box, component: nic}, ep2: {instance: "sw[0]", component: port}, scheme: one2one, link: eth}
)";

const char *const Workload = R"(num_ranks 2
rank 0 {
l1: send 8b to 1 tag 0
}
rank 1 {
l1: recv 8b from 0 tag 0
}
)";

struct Target {
  const char *name;
  // Writes the fuzzer's bytes where the driver will read them; returns the arguments.
  std::function<std::vector<std::string>(llvm::StringRef data, const std::string &dir)> prepare;
  // -max-memory: small enough that an input asking for more is refused at once, not after
  // a long run.
  const char *maxMemory = "8M";
  // -sim-max-events: the simulator with a small event cap (a workload that expands, like a
  // storage trace, would otherwise spend most of an execution simulating).
  const char *maxEvents = "20000";
};

void writeFile(const std::string &path, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "fuzz: cannot write " << path << ": " << ec.message() << "\n";
    std::abort();
  }
  os << data;
}

std::string in(const std::string &dir, llvm::StringRef name) { return dir + "/" + name.str(); }

// A file input with the given name, then the given options.
Target fileTarget(const char *name, const char *fileName, std::vector<std::string> options) {
  return {name, [fileName, options](llvm::StringRef data, const std::string &dir) {
            std::string path = in(dir, fileName);
            writeFile(path, data);
            std::vector<std::string> args{path};
            args.insert(args.end(), options.begin(), options.end());
            return args;
          }};
}

const std::vector<Target> &targets() {
  static const std::vector<Target> all = {
      fileTarget("infragraph-yaml", "fabric.yaml", {"-emit=digest"}),
      fileTarget("infragraph-json", "fabric.json", {"-emit=digest"}),
      fileTarget("goal-text", "workload.goal", {"-emit=sim"}),
      fileTarget("goal-bin", "workload.bin", {"-emit=sim"}),
      // The exact latency curve (model, one-pass envelopes, contention at both ends) and
      // the simulator at L0 beside it.
      fileTarget("sensitivity", "workload.goal", {"-emit=sensitivity", "-range=0:10us"}),
      // GPU kernels run as their messages (lower-kernels) on the simulator.
      fileTarget("msccl", "plan.json", {"-emit=sim"}),
      fileTarget("kernels", "workload.kernels", {"-emit=sim"}),
      // The same run on the GPU model, on four small NoC GPUs, at most 20,000 requests.
      fileTarget("kernels-gpu", "workload.kernels",
                 {"-fabric=single_tier:hosts=4,host=gpu_noc(mesh=2x2,cus=2,hbm=2,io=1)",
                  "-sim-model=gpu", "-gpu-max-requests=20000"}),
      fileTarget("vef", "trace.vef", {"-emit=sim"}),
      // An Nsight Systems SQLite export of an NCCL run (one node's file).
      fileTarget("nsys", "node.sqlite", {"-emit=sim"}),
      // An SPC trace, then optionally after "LAYOUTSEP" the -storage-layout file. A few
      // bytes ("slice_bytes: 1" and a large request) make thousands of sends wait for one
      // CPU at once: the simulator's parked queues (docs/sim.md) keep that linear. 1M
      // (schedules up to 13,107 ops at 80 bytes): under 8M, a quarter of a grown corpus
      // expanded to 20,000-100,000 ops, built and copied whole for a simulation the event
      // cap stops early, and that was most of the target's time. 5,000 events, so that
      // schedules of that size still reach the cap and its report.
      {"spc",
       [](llvm::StringRef data, const std::string &dir) {
         auto [trace, layout] = data.split("LAYOUTSEP");
         writeFile(in(dir, "trace.spc"), trace);
         std::vector<std::string> args{in(dir, "trace.spc"), "-emit=sim"};
         if (data.contains("LAYOUTSEP")) {
           writeFile(in(dir, "layout.yaml"), layout);
           args.push_back("-storage-layout=" + in(dir, "layout.yaml"));
         }
         return args;
       },
       "1M", "5000"},
      {"blueprint",
       [](llvm::StringRef data, const std::string &) {
         // digest, not stats: the exact diameter of stats is quadratic (a 1x40004 mesh takes
         // over 10 s under ASan), a known cost rather than a defect of the reader.
         return std::vector<std::string>{"-fabric=" + data.str(), "-emit=digest"};
       }},
      // A trace directory: the bytes split at form feeds into rank 0's file, rank 1's ...
      {"liballprof",
       [](llvm::StringRef data, const std::string &dir) {
         std::string traceDir = in(dir, "trace");
         std::error_code ec;
         llvm::sys::fs::remove_directories(traceDir);
         llvm::sys::fs::create_directories(traceDir);
         llvm::SmallVector<llvm::StringRef, 8> ranks;
         data.split(ranks, '\f', /*MaxSplit=*/7);
         for (size_t r = 0; r < ranks.size(); ++r)
           writeFile(in(traceDir, "pmpi-trace-rank-" + std::to_string(r) + ".txt"), ranks[r]);
         return std::vector<std::string>{in(traceDir, "pmpi-trace-rank-0.txt"), "-emit=sim"};
       }},
      // Chakra traces: the bytes split at "ETSEP" into trace.0.et, trace.1.et, ...
      {"chakra",
       [](llvm::StringRef data, const std::string &dir) {
         std::string traceDir = in(dir, "et");
         llvm::sys::fs::remove_directories(traceDir);
         llvm::sys::fs::create_directories(traceDir);
         llvm::SmallVector<llvm::StringRef, 8> ranks;
         data.split(ranks, "ETSEP", /*MaxSplit=*/7);
         for (size_t r = 0; r < ranks.size(); ++r)
           writeFile(in(traceDir, "trace." + std::to_string(r) + ".et"), ranks[r]);
         return std::vector<std::string>{in(traceDir, "trace.0.et"), "-emit=sim"};
       }},
      // An OTF2 archive: the bytes split at "OTF2SEP" into the anchor file traces.otf2,
      // the global definitions traces.def, then location k's traces/k.evt and traces/k.def.
      {"otf2",
       [](llvm::StringRef data, const std::string &dir) {
         std::string traceDir = in(dir, "otf2");
         llvm::sys::fs::remove_directories(traceDir);
         llvm::sys::fs::create_directories(traceDir + "/traces");
         llvm::SmallVector<llvm::StringRef, 10> parts;
         data.split(parts, "OTF2SEP", /*MaxSplit=*/9);
         for (size_t i = 0; i < parts.size(); ++i) {
           std::string name = i == 0   ? "traces.otf2"
                              : i == 1 ? "traces.def"
                                       : "traces/" + std::to_string((i - 2) / 2) +
                                             (i % 2 == 0 ? ".evt" : ".def");
           writeFile(in(traceDir, name), parts[i]);
         }
         return std::vector<std::string>{in(traceDir, "traces.otf2"), "-emit=sim"};
       }},
      // OTF2 records as bytes, read by the OTF2 trace model without libotf2
      // (Otf2Records.cpp says how they are written).
      {"otf2-records",
       [](llvm::StringRef data, const std::string &dir) {
         std::string path = in(dir, "trace.otf2rec");
         writeFile(path, data);
         return std::vector<std::string>{path, "-emit=sim"};
       }},
      {"jobs",
       [](llvm::StringRef data, const std::string &dir) {
         std::string path = in(dir, "jobs.yaml");
         writeFile(path, data);
         return std::vector<std::string>{in(dir, "fabric.yaml"), in(dir, "a.goal"),
                                         in(dir, "b.goal"), "-jobs=" + path, "-emit=sim"};
       }},
      {"place-map",
       [](llvm::StringRef data, const std::string &dir) {
         std::string path = in(dir, "map.txt");
         writeFile(path, data);
         return std::vector<std::string>{in(dir, "fabric.yaml"), in(dir, "a.goal"),
                                         "-place-map=" + path, "-emit=sim"};
       }},
  };
  return all;
}

const Target *Chosen = nullptr;
std::string Dir;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  llvm::StringRef name = *argc > 0 ? llvm::sys::path::filename((*argv)[0]) : "";
  for (const Target &t : targets())
    if (name == "fuzz-" + std::string(t.name))
      Chosen = &t;
  if (!Chosen) {
    llvm::errs() << "fuzz: run this program by one of its links, fuzz-<target> (targets:";
    for (const Target &t : targets())
      llvm::errs() << " " << t.name;
    llvm::errs() << "); it was run as '" << name << "'\n";
    std::abort();
  }
  // Every execution writes its input to this directory and infracc reads it back, so it
  // goes on a RAM file system when there is one: on the 2-core VM, 15,000 goal-text
  // executions took 7.9-9.4 s in /tmp (on disk) and 2.9 s in /dev/shm.
  // INFRACC_FUZZ_TMPDIR chooses another place.
  llvm::SmallString<128> model;
  if (const char *chosen = std::getenv("INFRACC_FUZZ_TMPDIR"))
    model = chosen;
  else if (llvm::sys::fs::is_directory("/dev/shm") &&
           llvm::sys::fs::access("/dev/shm", llvm::sys::fs::AccessMode::Write) ==
               std::error_code())
    model = "/dev/shm";
  else
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, model);
  llvm::sys::path::append(model, "infracc-fuzz-%%%%%%");
  llvm::SmallString<128> dir;
  std::error_code ec;
  do {
    llvm::sys::fs::createUniquePath(model, dir, /*MakeAbsolute=*/true);
    ec = llvm::sys::fs::create_directory(dir, /*IgnoreExisting=*/false);
  } while (ec == std::errc::file_exists);
  if (ec) {
    llvm::errs() << "fuzz: cannot create a scratch directory " << dir << ": " << ec.message()
                 << "\n";
    std::abort();
  }
  Dir = std::string(dir);
  writeFile(in(Dir, "fabric.yaml"), Fabric);
  writeFile(in(Dir, "a.goal"), Workload);
  writeFile(in(Dir, "b.goal"), Workload);
  std::atexit([] { llvm::sys::fs::remove_directories(Dir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> args = Chosen->prepare(bytes, Dir);
  args.push_back(std::string("-max-memory=") + Chosen->maxMemory);
  args.push_back(std::string("-sim-max-events=") + Chosen->maxEvents);
  args.push_back("-o");
  args.push_back("/dev/null");
  infracc::runDriverInProcess(args);
  return 0;
}
