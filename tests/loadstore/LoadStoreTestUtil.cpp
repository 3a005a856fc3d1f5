#include "tests/loadstore/LoadStoreTestUtil.h"

#include <sstream>

namespace infracc::test {

RunResult runOnText(const std::string &name, const std::string &text,
                    const std::vector<std::string> &args) {
  std::string path = makeTempDir("ls") + "/" + name;
  writeFile(path, text);
  std::vector<std::string> all{path};
  all.insert(all.end(), args.begin(), args.end());
  return runInfracc(all);
}

std::string at(const std::string &text, const std::string &needle, const std::string &after) {
  size_t from = after.empty() ? 0 : text.find(after);
  size_t pos = text.find(needle, from == std::string::npos ? 0 : from);
  if (pos == std::string::npos)
    return "<'" + needle + "' not found>";
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

std::vector<std::string> messages(const std::string &err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  std::string line;
  while (std::getline(in, line)) {
    size_t k = std::string::npos;
    for (const char *kind : {": error: ", ": warning: ", ": note: "})
      k = std::min(k, line.find(kind));
    if (k == std::string::npos)
      continue;
    // "path:L:C: error: ..." -> "L:C: error: ..."; "path: error: ..." -> "error: ...".
    std::string prefix = line.substr(0, k);
    size_t c2 = prefix.rfind(':');
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : prefix.rfind(':', c2 - 1);
    auto digits = [&](size_t from, size_t to) {
      return to > from && prefix.find_first_not_of("0123456789", from) >= to;
    };
    if (c1 != std::string::npos && digits(c1 + 1, c2) && digits(c2 + 1, prefix.size()))
      out.push_back(line.substr(c1 + 1));
    else
      out.push_back(line.substr(k + 2));
  }
  return out;
}

std::string twoGpuKernels(const std::string &header, const std::string &ops0,
                          const std::string &ops1) {
  return "# infracc kernel level\ngpus 2\n" + header +
         "kernel 0 gpu 0 instance 0 input 1024 output 1024 scratch 1024\n  workgroup 0\n" + ops0 +
         "kernel 1 gpu 1 instance 0 input 1024 output 1024 scratch 1024\n  workgroup 0\n" + ops1;
}

} // namespace infracc::test
