#include "ir/InputRegistry.h"

#include "support/Diagnostics.h"
#include "support/InputFile.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>

#include <deque>

namespace infracc {

static std::deque<InputFormat> &formats() {
  static std::deque<InputFormat> f;
  return f;
}

void InputRegistry::add(InputFormat f) { formats().push_back(std::move(f)); }

static std::vector<InputProvider> &providerList() {
  static std::vector<InputProvider> p;
  return p;
}
void InputRegistry::addProvider(InputProvider p) { providerList().push_back(std::move(p)); }
const std::vector<InputProvider> &InputRegistry::providers() { return providerList(); }

static std::vector<DriverAction> &actionList() {
  static std::vector<DriverAction> a;
  return a;
}
void InputRegistry::addAction(DriverAction a) { actionList().push_back(std::move(a)); }
const std::vector<DriverAction> &InputRegistry::actions() { return actionList(); }

std::vector<const InputFormat *> InputRegistry::all() {
  std::vector<const InputFormat *> out;
  for (const InputFormat &f : formats())
    out.push_back(&f);
  return out;
}

// A directory: by the content of the files in it, among the formats that read one.
std::vector<std::string> filesInDirectory(llvm::StringRef dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

static llvm::Expected<const InputFormat *> classifyDirectory(llvm::StringRef path) {
  std::vector<std::string> files = filesInDirectory(path);
  const InputFormat *pick = nullptr;
  int score = 0;
  constexpr size_t MaxLooked = 64;
  for (size_t i = 0; i < files.size() && i < MaxLooked && score < 90; ++i) {
    std::string head = readInputHead(files[i]);
    for (const InputFormat &f : formats())
      if (f.acceptsDirectory && f.sniff)
        if (int s = f.sniff(head); s > score) {
          score = s;
          pick = &f;
        }
  }
  if (pick)
    return pick;
  std::string kinds, names;
  for (const InputFormat &f : formats())
    if (f.acceptsDirectory)
      kinds += "\n  " + f.description;
  for (size_t i = 0; i < files.size() && i < 4; ++i)
    names += (i ? ", " : "") + llvm::sys::path::filename(files[i]).str();
  if (files.size() > 4)
    names += ", ...";
  return usageError("cannot tell what directory '" + path + "' holds: infracc reads a "
                    "directory as" + kinds + "\n(recognised by its files' content), and " +
                    (files.empty() ? std::string("it has no files")
                                   : "none of its " + std::to_string(files.size()) +
                                         (files.size() == 1 ? " file (" : " files (") + names +
                                         ") looks like one"));
}

llvm::Expected<const InputFormat *> InputRegistry::classify(llvm::StringRef path) {
  if (path != "-" && llvm::sys::fs::is_directory(path))
    return classifyDirectory(path);
  std::string ext = llvm::sys::path::extension(path).lower();
  std::vector<const InputFormat *> byExt;
  for (const InputFormat &f : formats())
    if (llvm::is_contained(f.extensions, ext))
      byExt.push_back(&f);
  if (byExt.size() == 1)
    return byExt.front();
  std::string head = readInputHead(path);
  auto best = [&](llvm::ArrayRef<const InputFormat *> cands) -> const InputFormat * {
    const InputFormat *pick = nullptr;
    int score = 0;
    for (const InputFormat *f : cands)
      if (f->sniff) {
        int s = f->sniff(head);
        if (s > score) {
          score = s;
          pick = f;
        }
      }
    return pick;
  };
  if (!byExt.empty()) {
    if (const InputFormat *f = best(byExt))
      return f;
    return byExt.front();
  }
  std::vector<const InputFormat *> every = all();
  if (const InputFormat *f = best(every))
    return f;
  if (path == "-") {
    std::string kinds;
    for (const InputFormat &f : formats())
      kinds += "\n  " + f.description;
    return usageError("cannot tell what standard input ('-') holds: it is recognised by its "
                      "first bytes only, as one of:" + kinds);
  }
  std::string known;
  for (const InputFormat &f : formats()) {
    known += "\n  ";
    known += llvm::join(f.extensions, ", ");
    known += "  ";
    known += f.description;
  }
  return usageError("cannot tell what kind of input '" + path +
                    "' is; inputs are recognised by extension:" + known);
}

std::optional<llvm::StringRef> readInputText(InputContext &ctx) {
  auto buf = openInputFile(ctx.path, /*nulTerminated=*/false);
  if (!buf) {
    ctx.diags.error(ctx.path, "cannot read: " + buf.getError().message());
    return std::nullopt;
  }
  unsigned id = ctx.diags.addBuffer(std::move(*buf));
  return ctx.diags.sourceMgr().getMemoryBuffer(id)->getBuffer();
}

} // namespace infracc
