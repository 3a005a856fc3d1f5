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
//
// The simulation digest (-digest=simulation) covers everything else a result depends
// on: the first line is `infracc-simulation-digest 1`, then the lines above, then
//
//   order <name> <device>                    one per node in node-id order, which is the
//                                            rank order of placement and every tie-break
//   attr node <name> <key> <value>           annotations, in node-id order
//   attr edge <a> <b> <key> <value>          in the edge order above
//   attr graph <key> <value>
//
// (each node's and edge's attributes in the order they were set). Two fabrics with the
// same simulation digest give the same -emit=sim, -emit=htsim and -emit=fqg output (fqg
// also prints the document's name and description, which no computation reads).
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/Support/raw_ostream.h>

#include <string>

namespace infracc {

enum class DigestKind { Structure, Simulation };

/// Writes the canonical text described above.
void writeDigestText(const FabricGraph &g, llvm::raw_ostream &os,
                     DigestKind kind = DigestKind::Structure);
/// SHA-256 of that text, as 64 lower-case hex digits.
std::string fabricDigest(const FabricGraph &g, DigestKind kind = DigestKind::Structure);

} // namespace infracc
