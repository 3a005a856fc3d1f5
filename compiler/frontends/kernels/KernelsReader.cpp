// Reads the kernel level as text (.kernels, formats/KernelsText.h), as -emit=kernels
// writes it: a schedule with one rank per GPU that launches its kernels one after the
// other. Meant for tests (golden files) and hand-written kernel programs.
#include "formats/KernelsText.h"
#include "ir/InputRegistry.h"
#include "ir/Kernels.h"
#include "ir/Module.h"
#include "support/Diagnostics.h"
#include "support/InputFile.h"
#include "support/Limits.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace infracc::kerneltext {
namespace {

using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

class Reader {
public:
  explicit Reader(DiagEngine &d) : d_(d), k_(std::make_shared<KernelLevel>()) {}
  std::optional<Schedule> read(StringRef text);

private:
  // The current line's words.
  bool tokenize(StringRef line);
  bool atEnd() const { return pos_ == toks_.size(); }
  StringRef peek() const { return atEnd() ? StringRef() : toks_[pos_]; }
  SMLoc here() const {
    return SMLoc::getFromPointer(atEnd() ? lineEnd_ : toks_[pos_].data());
  }
  bool fail(const Twine &msg) {
    d_.error(here(), msg);
    return false;
  }
  bool word(StringRef w) {
    if (peek() == w) {
      ++pos_;
      return true;
    }
    return fail("expected '" + w + "'" + (atEnd() ? "" : ", not '" + peek() + "'"));
  }
  bool accept(StringRef w) {
    if (peek() != w)
      return false;
    ++pos_;
    return true;
  }
  bool number(uint64_t &v, uint64_t max = ~0ull) {
    if (!atEnd() && !peek().getAsInteger(10, v) && v <= max) {
      ++pos_;
      return true;
    }
    return fail("expected a whole number" + (max == ~0ull ? Twine() : " up to " + Twine(max)) +
                (atEnd() ? "" : ", not '" + peek() + "'"));
  }
  bool number32(uint32_t &v) {
    uint64_t x;
    if (!number(x, 0xFFFFFFFFu))
      return false;
    v = uint32_t(x);
    return true;
  }
  bool prefixed(StringRef prefix, uint32_t &v) {
    StringRef t = peek();
    uint64_t x;
    if (t.consume_front(prefix) && !t.getAsInteger(10, x) && x <= 0xFFFFFFFFu) {
      v = uint32_t(x);
      ++pos_;
      return true;
    }
    return fail("expected " + prefix + "<number>" + (atEnd() ? "" : ", not '" + peek() + "'"));
  }
  bool quoted(std::string &s) {
    StringRef t = peek();
    if (t.size() >= 2 && t.front() == '"' && t.back() == '"') {
      s = t.drop_front().drop_back().str();
      ++pos_;
      return true;
    }
    return fail("expected a string in double quotes");
  }
  bool buffer(BufferKind &b) {
    if (auto k = parseBufferKind(peek())) {
      b = *k;
      ++pos_;
      return true;
    }
    return fail("expected a buffer: input, output or scratch" +
                (atEnd() ? Twine() : ", not '" + peek() + "'"));
  }
  bool ref(BufferRef &r);
  bool endOfLine() {
    if (atEnd())
      return true;
    return fail("unexpected '" + peek() + "' at the end of the statement");
  }

  bool header(StringRef kw);
  bool kernel();
  bool op(GpuOpKind kind);

  DiagEngine &d_;
  std::shared_ptr<KernelLevel> k_;
  llvm::SmallVector<StringRef, 16> toks_;
  size_t pos_ = 0;
  const char *lineEnd_ = nullptr;
  bool haveGpus_ = false;
  uint32_t kernel_ = ~0u;   // current kernel
  bool inWorkgroup_ = false;
};

bool Reader::tokenize(StringRef line) {
  toks_.clear();
  pos_ = 0;
  lineEnd_ = line.end();
  while (true) {
    line = line.ltrim(" \t\r");
    if (line.empty() || line.front() == '#')
      return true;
    size_t n;
    if (line.front() == '"') {
      n = line.find('"', 1);
      if (n == StringRef::npos) {
        d_.error(SMLoc::getFromPointer(line.data()), "the string has no closing '\"'");
        return false;
      }
      ++n;
    } else {
      n = line.find_first_of(" \t\r");
    }
    toks_.push_back(line.take_front(n));
    line = line.drop_front(std::min(n, line.size()));
  }
}

bool Reader::ref(BufferRef &r) {
  StringRef t = peek();
  if (atEnd())
    return fail("expected a buffer reference such as input+0 or gpu1.output+256");
  r = BufferRef{};
  uint32_t self = k_->kernels[kernel_].gpu;
  r.gpu = self;
  StringRef pre = t.take_until([](char c) { return c == '.'; });
  if (pre.size() < t.size()) {
    StringRef num = pre;
    uint64_t v;
    if (num.consume_front(kw::GroupPrefix))
      r.multicast = true;
    else if (!num.consume_front(kw::GpuPrefix))
      return fail("a buffer reference starts with gpu<N>., mc<N>. or the buffer's name, not '" +
                  pre + ".'");
    if (num.getAsInteger(10, v) || v > 0xFFFFFFFFu)
      return fail("expected a number after '" + pre.take_while(llvm::isAlpha) + "'");
    r.gpu = uint32_t(v);
    t = t.drop_front(pre.size() + 1);
  }
  if (t.consume_back(kw::PacketSuffix))
    r.packet = true;
  auto [name, offset] = t.split('+');
  auto b = parseBufferKind(name);
  if (!b || offset.getAsInteger(10, r.offset))
    return fail("expected <buffer>+<offset> with buffer input, output or scratch, not '" + t + "'");
  r.buffer = *b;
  ++pos_;
  return true;
}

bool Reader::header(StringRef w) {
  if (w == kw::Name)
    return quoted(k_->name) && endOfLine();
  if (w == kw::Collective)
    return quoted(k_->collective) && endOfLine();
  if (w == kw::InPlace) {
    k_->inPlace = true;
    return endOfLine();
  }
  if (w == kw::LoadStore) {
    LoadStoreParams p;
    if (!word(kw::CacheLine) || !number32(p.cacheLine) || !word(kw::Unroll) || !number32(p.unroll))
      return false;
    k_->loadStore = p;
    return endOfLine();
  }
  if (w == kw::Multicast) {
    uint32_t id;
    MulticastGroup g;
    if (!prefixed(kw::GroupPrefix, id))
      return false;
    if (id != k_->groups.size())
      return fail("multicast groups are numbered in order; expected mc" + Twine(k_->groups.size()));
    if (!word(kw::Instance) || !number32(g.instance) || !buffer(g.buffer) || !word(kw::Gpus))
      return false;
    while (!atEnd()) {
      uint32_t m;
      if (!number32(m))
        return false;
      g.gpus.push_back(m);
    }
    k_->groups.push_back(std::move(g));
    return true;
  }
  if (w == kw::Semaphore) {
    uint32_t id;
    Semaphore s;
    if (!prefixed(kw::SemPrefix, id))
      return false;
    if (id != k_->semaphores.size())
      return fail("semaphores are numbered in order; expected s" + Twine(k_->semaphores.size()));
    if (!word(kw::Gpu) || !number32(s.gpu) || !word(kw::Instance) || !number32(s.instance))
      return false;
    StringRef kind = peek();
    if (kind == "device")
      s.kind = SemaphoreKind::Device;
    else if (kind == "channel")
      s.kind = SemaphoreKind::Channel;
    else if (kind == "proxy")
      s.kind = SemaphoreKind::Proxy;
    else
      return fail("expected the semaphore's kind: device, channel or proxy");
    ++pos_;
    if (s.kind != SemaphoreKind::Device && (!word(kw::From) || !number32(s.peer)))
      return false;
    if (!word(kw::Index) || !number32(s.index) || !word(kw::Init) || !number32(s.init))
      return false;
    k_->semaphores.push_back(s);
    return endOfLine();
  }
  return fail("unknown statement '" + w + "'");
}

bool Reader::kernel() {
  uint32_t id;
  Kernel K;
  if (!number32(id))
    return false;
  if (id != k_->kernels.size())
    return fail("kernels are numbered in order; expected kernel " + Twine(k_->kernels.size()));
  if (!word(kw::Gpu) || !number32(K.gpu) || !word(kw::Instance) || !number32(K.instance))
    return false;
  if (K.gpu >= k_->numGpus)
    return fail("gpu " + Twine(K.gpu) + " does not exist (gpus " + Twine(k_->numGpus) + ")");
  if (accept(kw::Wavefronts) && !number32(K.wavefronts))
    return false;
  for (unsigned b = 0; b < NumBufferKinds; ++b)
    if (!word(bufferKindName(BufferKind(b))) || !number(K.bufferBytes[b]))
      return false;
  if (accept(kw::Wrap) && !number(K.scratchWrap))
    return false;
  K.firstWorkgroup = uint32_t(k_->workgroups.size());
  kernel_ = uint32_t(k_->kernels.size());
  k_->kernels.push_back(K);
  inWorkgroup_ = false;
  return endOfLine();
}

bool Reader::op(GpuOpKind kind) {
  GpuOp o;
  o.kind = kind;
  o.loc = here();
  ++pos_;
  bool ok = true;
  switch (kind) {
  case GpuOpKind::Load:
    ok = number(o.bytes) && ref(o.src);
    break;
  case GpuOpKind::Store:
    ok = number(o.bytes) && ref(o.dst);
    break;
  case GpuOpKind::Memcpy:
    ok = number(o.bytes) && ref(o.src) && word(kw::Arrow) && ref(o.dst);
    break;
  case GpuOpKind::Reduce:
    ok = number(o.bytes) && word(kw::Inputs) && number32(o.id);
    break;
  case GpuOpKind::SemAcquire:
  case GpuOpKind::SemRelease:
    ok = prefixed(kw::SemPrefix, o.id);
    break;
  case GpuOpKind::Nop:
    break;
  case GpuOpKind::Barrier:
    ok = number32(o.id) && word(kw::WorkgroupsWord) && number32(o.count);
    break;
  case GpuOpKind::Flush:
    ok = prefixed(kw::GpuPrefix, o.id);
    break;
  case GpuOpKind::Loop:
    ok = number32(o.count) && word(kw::UnitWord) && number(o.bytes) && word(kw::Ops) &&
         number32(o.id);
    break;
  }
  if (!ok)
    return false;
  if (accept(kw::Fused))
    o.flags |= gpuop::FusedWithNext;
  if (accept(kw::Proxy))
    o.flags |= gpuop::Proxy;
  if (accept(kw::Relaxed))
    o.flags |= gpuop::Relaxed;
  if (!endOfLine())
    return false;
  k_->ops.push_back(o);
  ++k_->workgroups.back().numOps;
  return true;
}

std::optional<Schedule> Reader::read(StringRef text) {
  while (!text.empty() && !d_.shouldStop()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    if (!tokenize(line) || toks_.empty())
      continue;
    StringRef w = toks_[0];
    if (!haveGpus_) {
      uint32_t n;
      ++pos_;
      if (w != kw::Gpus) {
        --pos_;
        fail("a kernel level starts with 'gpus <count>'");
        return std::nullopt;
      }
      if (!number32(n) || !endOfLine())
        return std::nullopt;
      if (n == 0) {
        d_.error(SMLoc::getFromPointer(toks_[1].data()), "there must be at least one GPU");
        return std::nullopt;
      }
      // Each GPU is a rank of the schedule, with its own tables (found by the kernels fuzz
      // target: 'gpus 2525242888' asked for 6 GB before anything else was read).
      if (auto msg = exceedsMemory(("the kernel level's " + Twine(n) + " GPUs").str(), n, 64)) {
        d_.error(SMLoc::getFromPointer(toks_[1].data()), *msg);
        return std::nullopt;
      }
      k_->numGpus = n;
      haveGpus_ = true;
      continue;
    }
    if (w == kw::Kernel) {
      ++pos_;
      kernel();
      continue;
    }
    if (w == kw::Workgroup) {
      ++pos_;
      uint32_t id;
      if (kernel_ == ~0u) {
        fail("a workgroup belongs to a kernel; start one with 'kernel'");
        continue;
      }
      if (!number32(id) || !endOfLine())
        continue;
      Kernel &K = k_->kernels[kernel_];
      if (id != K.numWorkgroups) {
        d_.error(SMLoc::getFromPointer(toks_[1].data()),
                 "workgroups are numbered in order; expected workgroup " + Twine(K.numWorkgroups));
        continue;
      }
      ++K.numWorkgroups;
      k_->workgroups.push_back({kernel_, uint32_t(k_->ops.size()), 0});
      inWorkgroup_ = true;
      continue;
    }
    if (auto kind = parseGpuOpKind(w)) {
      if (!inWorkgroup_) {
        fail("an operation belongs to a workgroup; start one with 'workgroup'");
        continue;
      }
      op(*kind);
      continue;
    }
    if (kernel_ != ~0u) {
      fail("unknown operation '" + w + "'; operations are load, store, memcpy, reduce, "
           "sem_acquire, sem_release, nop, barrier, flush and loop");
      continue;
    }
    ++pos_;
    header(w);
  }
  if (!haveGpus_ && !d_.hasErrors())
    d_.error(SMLoc::getFromPointer(text.data()), "a kernel level starts with 'gpus <count>'");
  if (d_.hasErrors())
    return std::nullopt;
  // Each GPU launches its kernels in order, one after the other.
  std::vector<std::vector<uint32_t>> perGpu(k_->numGpus);
  for (uint32_t i = 0; i < k_->kernels.size(); ++i)
    perGpu[k_->kernels[i].gpu].push_back(i);
  ScheduleBuilder b(k_->numGpus);
  for (uint32_t r = 0; r < k_->numGpus; ++r) {
    b.beginRank(r);
    for (size_t i = 0; i < perGpu[r].size(); ++i) {
      b.addOp(OpKind::Kernel, perGpu[r][i], 0);
      if (i)
        b.addDependency(uint32_t(i), uint32_t(i - 1), DepKind::Requires);
    }
    b.endRank();
  }
  b.setKernels(std::move(k_));
  return b.finish();
}

RegisterInputFormat KernelsFormat({
    .name = "kernels",
    .description = "kernel level as text (GPU kernels and operations, as -emit=kernels "
                   "writes it)",
    .extensions = {".kernels"},
    .role = InputRole::Workload,
    .sniff = [](StringRef head) {
      return head.contains("# infracc kernel level") ? 90 : 0;
    },
    .load = [](InputContext &ctx) -> llvm::Error {
      auto buf = openInputFile(ctx.path, /*nulTerminated=*/false);
      if (!buf)
        return inputError("cannot read '" + ctx.path + "': " + buf.getError().message());
      StringRef text = (*buf)->getBuffer();
      ctx.diags.addBuffer(std::move(*buf));
      std::optional<Schedule> s = Reader(ctx.diags).read(text);
      if (!s)
        return reportedError();
      ctx.module.jobs.push_back({ctx.path, std::move(*s)});
      return llvm::Error::success();
    },
});

} // namespace
} // namespace infracc::kerneltext
