// The InfraGraph frontend: reads an InfraGraph document (YAML or JSON, the same
// schema either way) into topology definitions (ir/Topology.h). Three top-level forms:
//
//   * an Infrastructure:   name, description, devices, links, instances, edges
//   * the reference's get_graph form:   {infrastructure: {...}, annotations: {...}}
//   * a blueprint:         blueprint: {name: clos, radix: 8, ...}  (+ devices: [...])
//
// The schema and the rules are documented in docs/infragraph.md. Syntax and schema
// errors are reported here; references between elements (unknown components, slices
// out of range, ...) are checked when the definitions are expanded (ir/FabricGraph.h),
// at the same source locations.
#pragma once

#include "ir/Topology.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/MemoryBufferRef.h>

#include <memory>
#include <string>

namespace infracc {

class DiagEngine;

namespace infragraph {

enum class Syntax { Yaml, Json };

/// Reads a document held in a buffer that is registered with diags' SourceMgr.
/// Returns null after reporting errors. A `blueprint:` document is instantiated
/// through the blueprint registry.
std::shared_ptr<Infrastructure> read(llvm::MemoryBufferRef buffer, Syntax syntax,
                                     DiagEngine &diags);

/// Reads the file at `path` ("-" for standard input): registers it with diags,
/// picks JSON for a .json name (or content starting with '{'), YAML otherwise.
/// A file that cannot be opened is an error (reported); returns null on any error.
std::shared_ptr<Infrastructure> readFile(llvm::StringRef path, DiagEngine &diags);

/// Reads files given together as one fabric: their devices combine, and one of them
/// holds the infrastructure (compiler/frontends/infragraph/OldForm.h). Documents in
/// InfraGraph's older form are converted to the current schema.
std::shared_ptr<Infrastructure> readFiles(llvm::ArrayRef<std::string> paths, DiagEngine &diags);

} // namespace infragraph
} // namespace infracc
