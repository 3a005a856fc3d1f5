// A small, fully built tree of a YAML (or JSON) document with a source location on
// every node, read with llvm::yaml's parser. llvm::yaml's own nodes can only be
// walked once, front to back; InfraGraph's schema is easier to check with random
// access (a `choice` key may come after the member it selects), so the frontend
// builds this tree first and checks it afterwards.
//
// Anchors and aliases are resolved (an alias shares the anchored node), merge keys
// (`<<`) are applied, duplicate keys are an error. Nesting deeper than
// YamlTree::MaxDepth and aliases that expand the document past -max-memory are errors
// (the tree is built recursively, and readers walk an alias's node once per use).
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/MemoryBufferRef.h>
#include <llvm/Support/SMLoc.h>

#include <deque>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;

struct YamlNode {
  enum Kind : uint8_t { Null, Scalar, Map, Seq };
  struct Entry {
    std::string key;
    llvm::SMLoc keyLoc;
    const YamlNode *value;
  };

  Kind kind = Null;
  bool quoted = false;        // scalar written in quotes or as a block scalar: always a string
  bool exactText = false;     // `value` is the source text at `loc` (+1 if quoted), byte for byte
  std::string value;          // scalar text
  llvm::SMLoc loc;            // first character of the node
  std::vector<Entry> entries; // Map, in document order
  std::vector<const YamlNode *> items;   // Seq
  /// Nodes in this one with aliases expanded (itself included; saturates): what a
  /// reader walking it visits.
  uint64_t expanded = 1;

  const YamlNode *get(llvm::StringRef key) const;
  const Entry *entry(llvm::StringRef key) const;
  /// What YAML's core schema makes of an unquoted scalar (quoted ones are strings).
  bool isNullScalar() const;
  bool isBoolScalar() const;
  bool isNumberScalar() const;
  /// "a mapping", "a list", "the number 5", "the string 'x'" ... for messages.
  std::string describe() const;
  /// The location of character `offset` of a scalar's value, when it maps 1:1 to
  /// the source text; otherwise the node's own location.
  llvm::SMLoc locAt(size_t offset) const;
};

class YamlTree {
public:
  static constexpr unsigned MaxDepth = 256;
  /// Parses `buffer` (already registered with diags' SourceMgr). Syntax errors are
  /// reported through `diags`; returns false if any was.
  bool parse(llvm::MemoryBufferRef buffer, DiagEngine &diags);
  /// Reads the file `path` ("-" for standard input) and parses it; an unreadable file
  /// is reported as "cannot read the <what> '<path>': <reason>".
  bool parseFile(llvm::StringRef path, llvm::StringRef what, DiagEngine &diags);
  /// The same for a JSON document: llvm::yaml reads more than JSON (comments,
  /// unquoted strings, trailing text), so nlohmann::json checks the syntax first and
  /// reports the first error at its line and column.
  bool parseJson(llvm::MemoryBufferRef buffer, DiagEngine &diags);
  /// The document's root; null for an empty file.
  const YamlNode *root() const { return root_; }

private:
  YamlNode *make() { return &nodes_.emplace_back(); }
  std::deque<YamlNode> nodes_;
  const YamlNode *root_ = nullptr;
  friend class YamlTreeBuilder;
};

} // namespace infracc
