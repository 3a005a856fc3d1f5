// The fabric digest: SHA-256 over a canonical text of the fully qualified graph.
//
// The text is, line by line (each line ends in '\n', fields are separated by '\t'):
//
//   infracc-fabric-digest 1
//   node <name> <kind> <type>                       one per node, sorted by name
//   edge <a> <b> <link> <bandwidth> <latency>       one per edge, a < b, sorted by (a, b)
//
// <kind> is the component kind (cpu, xpu, ..., custom), <type> the InfraGraph type
// attribute (the kind, or a custom component's type); <bandwidth> is in bits per
// second and <latency> in nanoseconds, each the shortest decimal that reads back to
// the exact value, or '-' when the link has none. Names compare bytewise.
//
// So the digest depends only on the expanded graph, not on how the document spells
// it (order of definitions, slices, units, composition written with `device`); it
// changes with any node name or kind, any edge, link name, bandwidth or latency. It
// does not cover descriptions, the fabric's name, or annotations.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace infracc {

/// Writes the canonical text described above.
void writeDigestText(const FabricGraph &g, llvm::raw_ostream &os);
/// SHA-256 of that text, as 64 lower-case hex digits.
std::string fabricDigest(const FabricGraph &g);

} // namespace infracc
