// Chakra execution traces: the attribute names and value types ASTRA-sim's feeder
// reads (Chakra's et_feeder_node.cpp: is_cpu_op bool, num_ops int64, tensor_size
// uint64, comm_type int64, comm_priority int32, comm_size int64, comm_src / comm_dst /
// comm_tag int32, pg_name string), and the length-delimited message stream of a .et
// file. The messages are generated from formats/ChakraEt.proto.
#pragma once

#include "formats/ChakraEt.pb.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <optional>
#include <string>

namespace infracc::chakra {

inline constexpr const char *Version = "0.0.4";   // GlobalMetadata.version written
/// The one node infracc writes for an NPU with nothing to do (ASTRA-sim cannot read a
/// trace without nodes); the reader drops it again.
inline constexpr const char *IdleNodeName = "idle (infracc)";

namespace attr {
inline constexpr const char *IsCpuOp = "is_cpu_op", *NumOps = "num_ops",
                            *TensorSize = "tensor_size", *CommType = "comm_type",
                            *CommPriority = "comm_priority", *CommSize = "comm_size",
                            *CommSrc = "comm_src", *CommDst = "comm_dst", *CommTag = "comm_tag",
                            *PgName = "pg_name";
}

/// Appends `name` with a value of the type the feeder reads it as.
void addBool(Node &n, const char *name, bool v);
void addInt32(Node &n, const char *name, int32_t v);
void addInt64(Node &n, const char *name, int64_t v);
void addUint32(Node &n, const char *name, uint32_t v);
void addString(Node &n, const char *name, const std::string &v);

/// An integer attribute read back whatever integer type the writer chose (traces from
/// other generators differ); none when absent or not an integer.
std::optional<int64_t> intAttr(const Node &n, llvm::StringRef name);
const AttributeProto *findAttr(const Node &n, llvm::StringRef name);

/// Writes one message preceded by its varint length.
void writeDelimited(llvm::raw_ostream &os, const google::protobuf::MessageLite &m);

/// Reads the messages of a .et file one by one.
class StreamReader {
public:
  explicit StreamReader(llvm::StringRef bytes);
  ~StreamReader();
  /// The next message into `m`: true when read, false at a clean end of the file;
  /// a damaged message sets error() and returns false too.
  bool next(google::protobuf::MessageLite &m);
  bool atEnd() const;
  /// Byte offset where the message last read (or the one that failed) starts.
  uint64_t offset() const { return offset_; }
  const std::string &error() const { return error_; }

private:
  llvm::StringRef bytes_;
  uint64_t pos_ = 0, offset_ = 0;
  std::string error_;
};

} // namespace infracc::chakra
