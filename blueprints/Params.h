// Reading and validating blueprint parameters. Every blueprint reads its parameters
// through a ParamReader, which rejects unknown names (with did-you-mean), duplicates
// and malformed values, fills in the documented defaults, and reports each problem at
// the value in the spec text (or against the spec's origin when there is no text).
//
// Accessors return a usable placeholder after an error and remember the failure, so a
// blueprint reads all its parameters, reports every problem at once, then checks ok().
#pragma once

#include "blueprints/Blueprint.h"
#include "support/Units.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/Twine.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infracc::blueprints {

/// The name closest to `bad` within a small edit distance, or "".
std::string closestName(llvm::StringRef bad, llvm::ArrayRef<std::string> names);
/// "; did you mean 'x'?" for closestName(), or "".
std::string didYouMean(llvm::StringRef bad, llvm::ArrayRef<std::string> names);

/// "try A or B": the valid values nearest to `v` in [min, max] (the nearest below and
/// the nearest above, or the two nearest on one side); "" when none is found.
std::string suggestValues(uint64_t v, const std::function<bool(uint64_t)> &valid, uint64_t min,
                          uint64_t max);

class ParamReader {
public:
  /// `what` names the blueprint in messages, e.g. "fabric blueprint 'clos'".
  ParamReader(const BlueprintSpec &spec, const std::vector<ParamInfo> &known, std::string what,
              DiagEngine &diags);

  bool ok() const { return ok_; }
  const BlueprintSpec &spec() const { return spec_; }
  DiagEngine &diags() { return diags_; }

  bool given(llvm::StringRef key) const { return find(key) != nullptr; }
  /// The value as written, or the documented default.
  std::string text(llvm::StringRef key) const;
  /// Of the value when given, else of the blueprint name (may be invalid).
  llvm::SMLoc loc(llvm::StringRef key) const;

  /// Reports at the parameter's value (or the spec) and marks the reader failed.
  void error(llvm::StringRef key, const llvm::Twine &msg);
  void error(const llvm::Twine &msg);

  /// A whole number in [min, max].
  uint64_t uint(llvm::StringRef key, uint64_t min, uint64_t max);
  /// Sizes joined by 'x' (4x4x4): minDims to maxDims of them, each in 1..maxSize (0: no
  /// upper limit). `form` describes them in messages (e.g. "<columns>x<rows>"; empty:
  /// "N to M sizes joined by 'x'"), `example` is a valid value.
  std::vector<uint64_t> dims(llvm::StringRef key, size_t minDims, size_t maxDims, uint64_t maxSize,
                             llvm::StringRef form, llvm::StringRef example);
  /// A positive bandwidth; `none` (or an empty default) leaves it unset.
  std::optional<Bandwidth> bandwidth(llvm::StringRef key);
  /// A non-negative latency; `none` (or an empty default) leaves it unset.
  std::optional<Duration> latency(llvm::StringRef key);
  /// One of `choices`.
  std::string choice(llvm::StringRef key, llvm::ArrayRef<llvm::StringRef> choices);
  /// A device: a name from the fabric file's devices, or a device blueprint with
  /// optional parameters, `name(key=value,...)`. nullopt after an error.
  std::optional<DeviceBuild> device(llvm::StringRef key);

private:
  const Param *find(llvm::StringRef key) const;
  llvm::SMLoc keyLoc(const Param &p) const;
  const ParamInfo *info(llvm::StringRef key) const;

  const BlueprintSpec &spec_;
  const std::vector<ParamInfo> &known_;
  std::string what_;
  DiagEngine &diags_;
  bool ok_ = true;
};

} // namespace infracc::blueprints
