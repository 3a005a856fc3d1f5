// Helpers for the InfraGraph tests: read a document from a string and expand it,
// capturing every message.
#pragma once

#include "compiler/frontends/infragraph/InfraGraphReader.h"
#include "ir/FabricGraph.h"
#include "support/Diagnostics.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>

namespace infracc::test {

struct Expanded {
  std::unique_ptr<DiagEngine> diags;   // owns the buffer the definitions point into
  std::shared_ptr<Infrastructure> defs;
  std::unique_ptr<FabricGraph> graph;
  std::string log;                     // everything reported
  std::shared_ptr<std::string> logStorage;
  std::unique_ptr<llvm::raw_string_ostream> logStream;
};

/// Reads `text` as the file `name` (JSON if it ends in .json) and expands it.
inline Expanded expandText(const std::string &text, const std::string &name = "t.yaml",
                           unsigned errorLimit = 20) {
  Expanded r;
  r.logStorage = std::make_shared<std::string>();
  r.logStream = std::make_unique<llvm::raw_string_ostream>(*r.logStorage);
  r.diags = std::make_unique<DiagEngine>(*r.logStream);
  r.diags->setErrorLimit(errorLimit);
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(text, name);
  llvm::MemoryBufferRef ref = buf->getMemBufferRef();
  r.diags->addBuffer(std::move(buf));
  bool json = llvm::StringRef(name).ends_with(".json");
  r.defs = infragraph::read(ref, json ? infragraph::Syntax::Json : infragraph::Syntax::Yaml,
                            *r.diags);
  if (r.defs && !r.diags->hasErrors())
    r.graph = expandFabric(r.defs, *r.diags);
  r.log = *r.logStorage;
  return r;
}

/// All node names in id order.
inline std::vector<std::string> nodeNames(const FabricGraph &g) {
  std::vector<std::string> out;
  for (NodeId n = 0; n < g.numNodes(); ++n)
    out.push_back(g.name(n));
  return out;
}

/// Edges as "a -- b link", sorted.
inline std::vector<std::string> edgeList(const FabricGraph &g) {
  std::vector<std::string> out;
  for (const auto &e : g.edges())
    out.push_back(g.name(e.u) + " -- " + g.name(e.v) + " " + g.link(e.link).name);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace infracc::test
