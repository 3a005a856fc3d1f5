// Writes a JSON value as a YAML document through llvm::yaml::Output, so that a
// backend builds its document once (as nlohmann::json) and offers both formats.
// The output is deterministic: mappings keep the json value's key order (sorted for
// nlohmann::json), strings are quoted exactly when YAML would read them as something
// else, and floating-point numbers are written in their shortest round-trip form
// (with a '.' so that YAML 1.1 readers such as PyYAML also see a number).
#pragma once

#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

namespace infracc {

void writeYaml(const nlohmann::json &doc, llvm::raw_ostream &os);
void writeYaml(const nlohmann::ordered_json &doc, llvm::raw_ostream &os);

/// The text writeYaml uses for a double: shortest round-trip digits, always with a
/// '.' or an exponent after one ("100.0" is written "100.0", 1e20 "1.0e+20").
std::string yamlNumber(double v);

} // namespace infracc
