// Expected diagnostics located by a marker in the test's own document text.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace infracc::test {

/// `file:line:col: kind: msg`, the source line and a caret under the marker's first
/// character (+ offset), for the n-th (1-based) occurrence of `marker` in `doc`.
inline std::string diagAt(const std::string &doc, const std::string &marker,
                          const std::string &kind, const std::string &msg, int occurrence = 1,
                          size_t offset = 0, const std::string &file = "t.yaml") {
  size_t pos = std::string::npos;
  for (int i = 0; i < occurrence; ++i)
    pos = doc.find(marker, pos == std::string::npos ? 0 : pos + 1);
  EXPECT_NE(pos, std::string::npos) << "marker '" << marker << "' not in the document";
  if (pos == std::string::npos)
    return "";
  pos += offset;
  size_t lineStart = pos == 0 ? std::string::npos : doc.rfind('\n', pos - 1);
  lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
  size_t line = 1 + std::count(doc.begin(), doc.begin() + lineStart, '\n');
  size_t col = pos - lineStart + 1;
  size_t lineEnd = doc.find('\n', lineStart);
  std::string text = doc.substr(lineStart, lineEnd - lineStart);
  return file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + kind + ": " + msg +
         "\n" + text + "\n" + std::string(col - 1, ' ') + "^\n";
}

inline std::string errorAt(const std::string &doc, const std::string &marker,
                           const std::string &msg, int occurrence = 1, size_t offset = 0,
                           const std::string &file = "t.yaml") {
  return diagAt(doc, marker, "error", msg, occurrence, offset, file);
}

inline std::string noteAt(const std::string &doc, const std::string &marker,
                          const std::string &msg, int occurrence = 1) {
  return diagAt(doc, marker, "note", msg, occurrence);
}

} // namespace infracc::test
