// Several InfraGraph files given together, and InfraGraph's older document form.
//
// The older form is what InfraGraph's own documentation examples still show:
//   components:  - {name: nic, type: nic, external: true}        (no choice, no count)
//   links:       - {name: pcie, bandwidth: {choice: gigabytes_per_second, ...}}
//   connections: - xpu.0.pcie.nic.0                     (in a device: comp.idx.link.comp.idx)
//   connections: - server.0.nic.0.eth1.leafsw.0.port.0  (inst.idx.comp.idx.link.inst.idx.comp.idx)
// Counts left out are implied by the highest index the connections use. Such
// documents often keep each device in its own file, so files given together
// combine their devices; one of them holds the infrastructure.
//
// Both are handled on the YAML tree: the documents are merged and rewritten into
// one current-form tree, which the ordinary reader then checks, so every message
// about the result still points at the text the user wrote.
#pragma once

#include "compiler/frontends/infragraph/YamlTree.h"

#include <llvm/ADT/ArrayRef.h>

#include <deque>
#include <string>

namespace infracc {
class DiagEngine;
}

namespace infracc::infragraph {

struct SourceDoc {
  const YamlNode *root;   // null for an empty file
  std::string path;
  llvm::SMLoc start;      // the file's first character
};

/// One current-form document standing for `docs`: a single current-form document
/// is returned unchanged; several are combined, and the older form is converted
/// (with one warning that names the form and how to upgrade the files). New nodes
/// live in `pool`. *origin is set to the path of the file holding the
/// infrastructure. Returns null after reporting errors.
const YamlNode *combineDocuments(llvm::ArrayRef<SourceDoc> docs, std::deque<YamlNode> &pool,
                                 DiagEngine &diags, std::string *origin);

} // namespace infracc::infragraph
