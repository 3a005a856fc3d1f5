#include "formats/ChakraEt.h"

#include <google/protobuf/io/coded_stream.h>

#include <fmt/format.h>

#include <limits>

namespace infracc::chakra {

namespace {
// A new attribute of the node, named.
AttributeProto &added(Node &n, const char *name) {
  AttributeProto *a = n.add_attr();
  a->set_name(name);
  return *a;
}
} // namespace

void addBool(Node &n, const char *name, bool v) { added(n, name).set_bool_val(v); }
void addInt32(Node &n, const char *name, int32_t v) { added(n, name).set_int32_val(v); }
void addUint32(Node &n, const char *name, uint32_t v) { added(n, name).set_uint32_val(v); }
void addInt64(Node &n, const char *name, int64_t v) { added(n, name).set_int64_val(v); }
void addString(Node &n, const char *name, const std::string &v) {
  added(n, name).set_string_val(v);
}

const AttributeProto *findAttr(const Node &n, llvm::StringRef name) {
  for (const AttributeProto &a : n.attr())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::optional<int64_t> intAttr(const Node &n, llvm::StringRef name) {
  const AttributeProto *a = findAttr(n, name);
  if (!a)
    return std::nullopt;
  switch (a->value_case()) {
  case AttributeProto::kInt32Val: return a->int32_val();
  case AttributeProto::kInt64Val: return a->int64_val();
  case AttributeProto::kUint32Val: return a->uint32_val();
  case AttributeProto::kUint64Val:
    if (a->uint64_val() > uint64_t(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return int64_t(a->uint64_val());
  default: return std::nullopt;
  }
}

void writeDelimited(llvm::raw_ostream &os, const google::protobuf::MessageLite &m) {
  std::string body = m.SerializeAsString();
  uint8_t len[10];
  uint8_t *end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(body.size()), len);
  os.write(reinterpret_cast<const char *>(len), end - len);
  os << body;
}

StreamReader::StreamReader(llvm::StringRef bytes) : bytes_(bytes) {}
StreamReader::~StreamReader() = default;

bool StreamReader::atEnd() const { return pos_ >= bytes_.size(); }

bool StreamReader::next(google::protobuf::MessageLite &m) {
  offset_ = pos_;
  if (atEnd())
    return false;
  const auto *data = reinterpret_cast<const uint8_t *>(bytes_.data()) + pos_;
  const size_t left = bytes_.size() - pos_;
  google::protobuf::io::CodedInputStream in(data, int(std::min<size_t>(left, INT32_MAX)));
  uint32_t len = 0;
  if (!in.ReadVarint32(&len)) {
    error_ = "a damaged message length";
    return false;
  }
  const size_t head = size_t(in.CurrentPosition());
  if (len > left - head) {
    error_ = fmt::format("a message of {} bytes, but only {} are left in the file", len,
                         left - head);
    return false;
  }
  if (!m.ParseFromArray(data + head, int(len))) {
    error_ = fmt::format("a message of {} bytes that is not a valid {}", len, m.GetTypeName());
    return false;
  }
  pos_ += head + len;
  return true;
}

} // namespace infracc::chakra
