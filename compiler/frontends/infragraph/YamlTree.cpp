#include "compiler/frontends/infragraph/YamlTree.h"

#include "support/Diagnostics.h"
#include "support/Limits.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/YAMLParser.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace infracc {

namespace yaml = llvm::yaml;

// What a reader makes of a node it walks: measured about 28 bytes per expanded node for
// an InfraGraph device list sharing one component list through an alias (70 million
// expanded nodes, 1.98 GB).
constexpr uint64_t ExpandedNodeBytes = 32;
// Past a million nodes, aliases may multiply the document at most this often (go-yaml
// refuses "excessive aliasing" by a similar rule); sharing a list between devices is
// far below it.
constexpr uint64_t MaxAliasRatio = 100, AliasRatioFrom = 1000000;

const YamlNode::Entry *YamlNode::entry(llvm::StringRef key) const {
  for (const Entry &e : entries)
    if (e.key == key)
      return &e;
  return nullptr;
}

const YamlNode *YamlNode::get(llvm::StringRef key) const {
  const Entry *e = entry(key);
  return e ? e->value : nullptr;
}

bool YamlNode::isNullScalar() const {
  if (kind == Null)
    return true;
  if (kind != Scalar || quoted)
    return false;
  return value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL";
}

bool YamlNode::isBoolScalar() const {
  if (kind != Scalar || quoted)
    return false;
  // YAML 1.2's true/false, plus the YAML 1.1 words PyYAML (the reference's reader)
  // also turns into booleans.
  return llvm::StringSwitch<bool>(value)
      .Cases("true", "True", "TRUE", "false", "False", "FALSE", true)
      .Cases("yes", "Yes", "YES", "no", "No", "NO", true)
      .Cases("on", "On", "ON", "off", "Off", "OFF", true)
      .Default(false);
}

static bool isDecimalNumber(llvm::StringRef s) {
  if (s.consume_front("+") || s.consume_front("-")) {
  }
  if (s == ".inf" || s == ".Inf" || s == ".INF")
    return true;
  size_t digits = 0;
  while (!s.empty() && llvm::isDigit(s.front())) {
    s = s.drop_front();
    ++digits;
  }
  if (s.consume_front(".")) {
    while (!s.empty() && llvm::isDigit(s.front())) {
      s = s.drop_front();
      ++digits;
    }
  }
  if (!digits)
    return false;
  if (!s.empty() && (s.front() == 'e' || s.front() == 'E')) {
    s = s.drop_front();
    if (!s.empty() && (s.front() == '+' || s.front() == '-'))
      s = s.drop_front();
    if (s.empty())
      return false;
    while (!s.empty() && llvm::isDigit(s.front()))
      s = s.drop_front();
  }
  return s.empty();
}

bool YamlNode::isNumberScalar() const {
  if (kind != Scalar || quoted)
    return false;
  llvm::StringRef s(value);
  if (s == ".nan" || s == ".NaN" || s == ".NAN")
    return true;
  if ((s.starts_with("0x") || s.starts_with("0o")) && s.size() > 2)
    return llvm::all_of(s.drop_front(2), llvm::isHexDigit);
  return isDecimalNumber(s);
}

std::string YamlNode::describe() const {
  switch (kind) {
  case Null:
    return "nothing";
  case Map:
    return "a mapping";
  case Seq:
    return "a list";
  case Scalar:
    break;
  }
  if (isNullScalar())
    return fmt::format("null ('{}')", value);
  if (isBoolScalar())
    return fmt::format("the boolean '{}'", value);
  if (isNumberScalar())
    return fmt::format("the number {}", value);
  return fmt::format("the string '{}'", value);
}

llvm::SMLoc YamlNode::locAt(size_t offset) const {
  if (!exactText || !loc.isValid() || offset > value.size())
    return loc;
  return llvm::SMLoc::getFromPointer(loc.getPointer() + (quoted ? 1 : 0) + offset);
}

// ---------------------------------------------------------------------------------

class YamlTreeBuilder {
public:
  YamlTreeBuilder(YamlTree &tree, DiagEngine &diags, const char *bufferStart)
      : tree_(tree), diags_(diags), bufferStart_(bufferStart) {}
  const YamlNode *build(yaml::Node *n, llvm::SMLoc fallback);
  /// A collection nested past MaxDepth was met: the build stopped there, and the
  /// parser must not be moved on (skipping the rest recurses as deep as the nesting).
  bool tooDeep() const { return tooDeep_; }

private:
  void merge(const YamlNode *from, llvm::SMLoc loc, std::vector<YamlNode::Entry> &merged,
             llvm::StringSet<> &mergedKeys);

  YamlTree &tree_;
  DiagEngine &diags_;
  llvm::StringMap<const YamlNode *> anchors_;
  const char *bufferStart_;
  unsigned depth_ = 0;
  bool tooDeep_ = false;
};

const YamlNode *YamlTreeBuilder::build(yaml::Node *n, llvm::SMLoc fallback) {
  YamlNode *out = tree_.make();
  out->loc = fallback;
  if (!n)
    return out;
  if (n->getSourceRange().Start.isValid())
    out->loc = n->getSourceRange().Start;
  // llvm::yaml starts a flow collection's range at its first entry: point at the
  // opening bracket instead.
  if ((llvm::isa<yaml::MappingNode>(n) || llvm::isa<yaml::SequenceNode>(n)) &&
      out->loc.isValid() && out->loc.getPointer() > bufferStart_) {
    const char *p = out->loc.getPointer();
    if (*p != '{' && *p != '[') {
      const char *q = p - 1;
      while (q > bufferStart_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
        --q;
      if (*q == '{' || *q == '[')
        out->loc = llvm::SMLoc::getFromPointer(q);
    }
  }

  const bool collection = llvm::isa<yaml::MappingNode>(n) || llvm::isa<yaml::SequenceNode>(n);
  if (collection && depth_ >= YamlTree::MaxDepth) {
    diags_.error(out->loc, fmt::format("lists and mappings nested more than {} levels deep "
                                       "(infracc's inputs need a few)",
                                       YamlTree::MaxDepth));
    tooDeep_ = true;
    return out;
  }
  struct Deeper {
    unsigned &depth;
    explicit Deeper(unsigned &d) : depth(d) { ++depth; }
    ~Deeper() { --depth; }
  } deeper(depth_);

  llvm::StringRef tag = n->getRawTag();
  if (auto *alias = llvm::dyn_cast<yaml::AliasNode>(n)) {
    auto it = anchors_.find(alias->getName());
    if (it == anchors_.end()) {
      diags_.error(out->loc, "alias '*" + alias->getName() + "' names no anchor defined before it");
      return out;
    }
    return it->second;
  }
  if (auto *s = llvm::dyn_cast<yaml::ScalarNode>(n)) {
    llvm::SmallString<64> storage;
    out->kind = YamlNode::Scalar;
    out->value = s->getValue(storage).str();
    llvm::StringRef raw = s->getRawValue();
    out->quoted = raw.starts_with("'") || raw.starts_with("\"");
    llvm::StringRef text = out->quoted && raw.size() >= 2 ? raw.drop_front().drop_back() : raw;
    out->exactText = text == out->value;
  } else if (auto *b = llvm::dyn_cast<yaml::BlockScalarNode>(n)) {
    out->kind = YamlNode::Scalar;
    out->value = b->getValue().str();
    out->quoted = true;
  } else if (auto *m = llvm::dyn_cast<yaml::MappingNode>(n)) {
    out->kind = YamlNode::Map;
    std::vector<YamlNode::Entry> merged;
    llvm::StringSet<> mergedKeys;
    llvm::StringMap<size_t> index;   // key -> entry: a linear search per key was quadratic
    for (yaml::KeyValueNode &kv : *m) {
      yaml::Node *keyNode = kv.getKey();
      if (!keyNode)
        break;
      llvm::SMLoc keyLoc = keyNode->getSourceRange().Start;
      const YamlNode *key = build(keyNode, keyLoc);
      if (tooDeep_)
        break;
      yaml::Node *valueNode = kv.getValue();
      const YamlNode *value = build(valueNode, keyLoc);
      if (tooDeep_)
        break;
      if (key->kind != YamlNode::Scalar) {
        diags_.error(keyLoc, "a mapping key must be a plain string, not " + key->describe());
        continue;
      }
      if (key->value == "<<" && !key->quoted) {
        merge(value, keyLoc, merged, mergedKeys);
        continue;
      }
      auto [at, fresh] = index.try_emplace(key->value, out->entries.size());
      if (!fresh) {
        diags_.error(keyLoc, "key '" + key->value + "' appears twice in this mapping");
        diags_.note(out->entries[at->second].keyLoc, "first occurrence is here");
        continue;
      }
      out->entries.push_back({key->value, keyLoc, value});
    }
    // Merged keys come after, and never override, the mapping's own keys.
    for (YamlNode::Entry &e : merged)
      if (!index.contains(e.key))
        out->entries.push_back(std::move(e));
    for (const YamlNode::Entry &e : out->entries)
      out->expanded = saturatingAdd(out->expanded, saturatingAdd(1, e.value->expanded));
  } else if (auto *q = llvm::dyn_cast<yaml::SequenceNode>(n)) {
    out->kind = YamlNode::Seq;
    for (yaml::Node &item : *q) {
      out->items.push_back(build(&item, out->loc));
      if (tooDeep_)
        break;
      out->expanded = saturatingAdd(out->expanded, out->items.back()->expanded);
    }
  } else {
    out->kind = YamlNode::Null;
  }

  if (!tag.empty() && out->kind != YamlNode::Null) {
    std::string verbatim = n->getVerbatimTag();
    llvm::StringRef v(verbatim);
    if (out->kind == YamlNode::Scalar && v == "tag:yaml.org,2002:str") {
      out->quoted = true;
    } else if (out->kind == YamlNode::Scalar &&
               (v == "tag:yaml.org,2002:int" || v == "tag:yaml.org,2002:float" ||
                v == "tag:yaml.org,2002:bool" || v == "tag:yaml.org,2002:null")) {
      // The value is read by the field's type anyway.
    } else if (!(out->kind == YamlNode::Map && v == "tag:yaml.org,2002:map") &&
               !(out->kind == YamlNode::Seq && v == "tag:yaml.org,2002:seq")) {
      diags_.error(out->loc, "unsupported YAML tag '" + tag +
                                 "'; InfraGraph documents use plain mappings, lists, strings "
                                 "and numbers");
    }
  }
  if (!n->getAnchor().empty())
    anchors_[n->getAnchor()] = out;
  return out;
}

void YamlTreeBuilder::merge(const YamlNode *from, llvm::SMLoc loc,
                            std::vector<YamlNode::Entry> &merged, llvm::StringSet<> &mergedKeys) {
  auto addMap = [&](const YamlNode *m) {
    for (const YamlNode::Entry &e : m->entries)
      if (mergedKeys.insert(e.key).second)
        merged.push_back(e);
  };
  if (from->kind == YamlNode::Map) {
    addMap(from);
    return;
  }
  if (from->kind == YamlNode::Seq) {
    bool ok = true;
    for (const YamlNode *item : from->items)
      if (item->kind == YamlNode::Map)
        addMap(item);
      else
        ok = false;
    if (ok)
      return;
  }
  diags_.error(loc, "a merge key '<<' needs a mapping or a list of mappings, not " +
                        from->describe());
}

// ---------------------------------------------------------------------------------

namespace {
struct HandlerScope {
  llvm::SourceMgr &sm;
  llvm::SourceMgr::DiagHandlerTy oldHandler;
  void *oldContext;
  HandlerScope(llvm::SourceMgr &sm, DiagEngine &diags)
      : sm(sm), oldHandler(sm.getDiagHandler()), oldContext(sm.getDiagContext()) {
    sm.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          auto &diags = *static_cast<DiagEngine *>(ctx);
          Severity sev = d.getKind() == llvm::SourceMgr::DK_Error     ? Severity::Error
                         : d.getKind() == llvm::SourceMgr::DK_Warning ? Severity::Warning
                                                                      : Severity::Note;
          // LLVM's YAML messages start with a capital letter; ours do not.
          std::string msg = d.getMessage().str();
          if (msg.size() > 1 && llvm::isUpper(msg[0]) && llvm::isLower(msg[1]))
            msg[0] = static_cast<char>(llvm::toLower(msg[0]));
          diags.report(d.getLoc(), sev, "YAML syntax: " + msg);
        },
        &diags);
  }
  ~HandlerScope() { sm.setDiagHandler(oldHandler, oldContext); }
};
} // namespace

bool YamlTree::parseFile(llvm::StringRef path, llvm::StringRef what, DiagEngine &diags) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    diags.error("", "cannot read the " + what + " '" + path + "': " + buf.getError().message());
    return false;
  }
  llvm::MemoryBufferRef ref = (*buf)->getMemBufferRef();
  diags.addBuffer(std::move(*buf));
  return parse(ref, diags);
}

bool YamlTree::parse(llvm::MemoryBufferRef buffer, DiagEngine &diags) {
  unsigned before = diags.errorCount();
  HandlerScope scope(diags.sourceMgr(), diags);
  yaml::Stream stream(buffer, diags.sourceMgr(), /*ShowColors=*/false);
  YamlTreeBuilder builder(*this, diags, buffer.getBufferStart());
  unsigned docs = 0;
  for (yaml::Document &doc : stream) {
    yaml::Node *rootNode = doc.getRoot();
    if (docs++ == 0) {
      if (rootNode && !llvm::isa<yaml::NullNode>(rootNode))
        root_ = builder.build(rootNode, llvm::SMLoc::getFromPointer(buffer.getBufferStart()));
      else if (rootNode)
        rootNode->skip();
      if (builder.tooDeep())
        return false;   // not a step further: the parser would skip the rest recursively
      // Aliases share nodes, but every reader walks an alias's node once per use: a
      // few hundred bytes of anchors and aliases can stand for billions of nodes.
      if (root_ && root_->expanded > std::max<uint64_t>(MaxAliasRatio * nodes_.size(),
                                                         AliasRatioFrom)) {
        diags.error(root_->loc,
                    fmt::format("with its aliases expanded the document has {} nodes, {} times "
                                "the {} written; more than {} times (and {}) is refused as an "
                                "alias bomb",
                                root_->expanded, root_->expanded / nodes_.size(), nodes_.size(),
                                MaxAliasRatio, AliasRatioFrom));
        return false;
      }
      if (root_ && root_->expanded > nodes_.size())
        if (auto msg = exceedsMemory(fmt::format("the document's {} nodes with its aliases "
                                                 "expanded ({} written)",
                                                 root_->expanded, nodes_.size()),
                                     root_->expanded, ExpandedNodeBytes)) {
          diags.error(root_->loc, *msg);
          return false;
        }
    } else {
      llvm::SMLoc at = rootNode ? rootNode->getSourceRange().Start : llvm::SMLoc();
      diags.error(at.isValid() ? at : llvm::SMLoc::getFromPointer(buffer.getBufferStart()),
                  "a second YAML document in one file; an InfraGraph file holds one document");
      break;
    }
  }
  if (stream.failed() && diags.errorCount() == before)
    diags.error(llvm::SMLoc::getFromPointer(buffer.getBufferStart()), "YAML syntax error");
  return diags.errorCount() == before;
}

namespace {

struct JsonSyntaxCheck : nlohmann::json::json_sax_t {
  size_t errorPos = 0;
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string &, const nlohmann::json::exception &ex)
      override {
    errorPos = position;
    message = ex.what();
    return false;
  }
};

} // namespace

bool YamlTree::parseJson(llvm::MemoryBufferRef buffer, DiagEngine &diags) {
  JsonSyntaxCheck check;
  llvm::StringRef text = buffer.getBuffer();
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &check)) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error
    // while parsing object - unexpected '}'; expected string literal": keep the part
    // after the position, which DiagEngine prints itself.
    llvm::StringRef msg(check.message);
    size_t colon = msg.find(": ");
    if (msg.contains("parse error at line") && colon != llvm::StringRef::npos)
      msg = msg.substr(colon + 2);
    size_t pos = check.errorPos ? check.errorPos - 1 : 0;
    if (pos > text.size())
      pos = text.size();
    diags.error(llvm::SMLoc::getFromPointer(text.data() + pos), "JSON syntax: " + msg);
    return false;
  }
  return parse(buffer, diags);
}

} // namespace infracc
