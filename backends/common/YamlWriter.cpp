#include "backends/common/YamlWriter.h"

#include <llvm/Support/YAMLTraits.h>

#include <fmt/format.h>

#include <cmath>
#include <deque>

namespace infracc {
namespace {

// Views of one json value for llvm::yaml's polymorphic traits: the same node seen as
// a scalar, a mapping or a sequence.
template <typename Json> struct YNode;

template <typename Json> struct YScalar {
  const Json *j = nullptr;
};
template <typename Json> struct YMap {
  const Json *j = nullptr;
};
template <typename Json> struct YSeq {
  const Json *j = nullptr;
  std::deque<YNode<Json>> items;   // built on first use, stable addresses
};
template <typename Json> struct YNode {
  explicit YNode(const Json *j) : scalar{j}, map{j}, seq{j, {}} {}
  YScalar<Json> scalar;
  YMap<Json> map;
  YSeq<Json> seq;
};

} // namespace

std::string yamlNumber(double v) {
  std::string s = fmt::format("{}", v);
  if (std::isfinite(v) && s.find_first_of(".e") == std::string::npos)
    s += ".0";
  else if (size_t e = s.find('e'); e != std::string::npos && s.find('.') == std::string::npos)
    s.insert(e, ".0");
  return s;
}

} // namespace infracc

namespace llvm::yaml {

template <typename Json> struct PolymorphicTraits<infracc::YNode<Json>> {
  static NodeKind getKind(const infracc::YNode<Json> &n) {
    if (n.scalar.j->is_object())
      return NodeKind::Map;
    if (n.scalar.j->is_array())
      return NodeKind::Sequence;
    return NodeKind::Scalar;
  }
  static infracc::YScalar<Json> &getAsScalar(infracc::YNode<Json> &n) { return n.scalar; }
  static infracc::YMap<Json> &getAsMap(infracc::YNode<Json> &n) { return n.map; }
  static infracc::YSeq<Json> &getAsSequence(infracc::YNode<Json> &n) { return n.seq; }
};

template <typename Json> struct TaggedScalarTraits<infracc::YScalar<Json>> {
  static void output(const infracc::YScalar<Json> &s, void *, raw_ostream &os, raw_ostream &) {
    const Json &j = *s.j;
    if (j.is_string())
      os << j.template get_ref<const std::string &>();
    else if (j.is_boolean())
      os << (j.template get<bool>() ? "true" : "false");
    else if (j.is_number_integer())
      os << j.template get<int64_t>();
    else if (j.is_number_unsigned())
      os << j.template get<uint64_t>();
    else if (j.is_number_float())
      os << infracc::yamlNumber(j.template get<double>());
    else
      os << "null";
  }
  static StringRef input(StringRef, StringRef, void *, infracc::YScalar<Json> &) {
    return "reading is not supported";
  }
  static QuotingType mustQuote(const infracc::YScalar<Json> &s, StringRef text) {
    return s.j->is_string() ? needsQuotes(text) : QuotingType::None;
  }
};

template <typename Json> struct CustomMappingTraits<infracc::YMap<Json>> {
  static void inputOne(IO &, StringRef, infracc::YMap<Json> &) {}
  static void output(IO &io, infracc::YMap<Json> &m) {
    for (auto it = m.j->begin(); it != m.j->end(); ++it) {
      infracc::YNode<Json> child(&it.value());
      io.mapRequired(it.key().c_str(), child);
    }
  }
};

template <typename Json> struct SequenceTraits<infracc::YSeq<Json>> {
  static size_t size(IO &, infracc::YSeq<Json> &s) { return s.j->size(); }
  static infracc::YNode<Json> &element(IO &, infracc::YSeq<Json> &s, size_t i) {
    while (s.items.size() <= i)
      s.items.emplace_back(&(*s.j)[s.items.size()]);
    return s.items[i];
  }
};

} // namespace llvm::yaml

namespace infracc {

template <typename Json> static void writeAny(const Json &doc, llvm::raw_ostream &os) {
  llvm::yaml::Output out(os, nullptr, /*WrapColumn=*/0);
  YNode<Json> root(&doc);
  out << root;
}

void writeYaml(const nlohmann::json &doc, llvm::raw_ostream &os) { writeAny(doc, os); }
void writeYaml(const nlohmann::ordered_json &doc, llvm::raw_ostream &os) { writeAny(doc, os); }

} // namespace infracc
