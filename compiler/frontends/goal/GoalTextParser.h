// The GOAL text reader: a hand-written scanner over a memory-mapped buffer that
// accepts what LogGOPSim's txt2bin accepts (docs/goal.md has the grammar), plus
// indentation, trailing comments and labels used before they are defined, and that
// reports every problem as `file:line:col: error:` instead of truncating.
//
// Extending the language (the extended GOAL dialect): statements are dispatched on
// their first keyword through a Dialect table, so a new operation such as
//   l4: allreduce 1048576b comm 1 algo ring
// is one OpHandler that uses the toolkit below (numbers, keywords, ordered clauses,
// statement end) and adds its op through addOp(); a declaration between `num_ranks`
// and the first rank block (`comm 1 ranks 0,1,2,3`) is one DeclHandler. The scanning
// of lines, labels, dependencies, rank blocks and errors stays as it is.
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/Twine.h>

#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
}

namespace infracc {
class DiagEngine;
class Progress;
}

namespace infracc::goal {

class TextParser;

/// An operation statement being parsed: `[label:] keyword ...`.
struct OpStatement {
  llvm::StringRef label;   // empty when the op has no label
  const char *begin;       // first character of the statement
  const char *keyword;     // the op keyword
};

/// Parses the rest of an op statement, cursor just after its keyword, up to and
/// including the statement's end (TextParser::parseClauses or endStatement), and adds
/// the op with TextParser::addOp. Returns false after reporting an error.
using OpHandler = bool (*)(TextParser &, const OpStatement &);
/// Parses a declaration between the header and the first rank block, cursor just
/// after its keyword, up to and including its end. Returns false after an error.
using DeclHandler = bool (*)(TextParser &, const char *keywordLoc);

struct Dialect {
  struct Op {
    llvm::StringRef keyword;
    OpHandler parse;
  };
  struct Decl {
    llvm::StringRef keyword;
    DeclHandler parse;
  };
  std::vector<Op> ops;
  std::vector<Decl> declarations;

  /// LogGOPSim's GOAL: send, recv, calc; no declarations.
  static const Dialect &plain();
  /// plain() plus communicator declarations and collective statements
  /// (GoalCollectives.cpp, docs/collectives.md).
  static const Dialect &extended();
};

/// An optional clause of an op statement (`tag 5`, `cpu 2`). Clauses are accepted
/// only in the order of the array given to parseClauses, each at most once.
struct Clause {
  llvm::StringRef keyword;
  uint64_t max;                 // largest value accepted
  llvm::StringRef what;         // for messages: "tag", "cpu index"
  bool wildcard = false;        // `-1` accepted (value then UINT64_MAX)
  bool present = false;
  uint64_t value = 0;
};

class TextParser {
public:
  struct Options {
    bool keepLabels = true;       // keep labels in the Schedule for later messages
    bool keepSourceLocs = true;   // keep each op's file:line:col for later messages
    Progress *progress = nullptr; // advanced as the buffer is consumed
    /// Streaming: called with num_ranks once the header is read; every rank then goes
    /// to the sink it returns as soon as its block is read (while no error has been
    /// found), and parse() returns a schedule with the ranks' sizes, maxCpu and maxNic
    /// but no ops (ScheduleBuilder::streamTo).
    std::function<ScheduleBuilder::RankSink(uint32_t numRanks)> streamTo;
  };

  /// `bufferId` is a buffer registered with diags (DiagEngine::addBuffer); it must be
  /// NUL-terminated (MemoryBuffer's default).
  TextParser(DiagEngine &diags, unsigned bufferId, const Dialect &dialect, Options opts);
  TextParser(DiagEngine &diags, unsigned bufferId, const Dialect &dialect)
      : TextParser(diags, bufferId, dialect, Options()) {}

  /// Parses the whole buffer; nullopt after errors (all reported through diags).
  std::optional<Schedule> parse();

  // --- Toolkit for OpHandler / DeclHandler -------------------------------------------
  const char *pos() const { return p_; }
  uint32_t numRanks() const { return numRanks_; }
  uint32_t rank() const { return rank_; }
  void error(const char *loc, const llvm::Twine &msg);

  /// Skips blanks (spaces, tabs).
  void skipBlanks() {
    while (*p_ == ' ' || *p_ == '\t')
      ++p_;
  }
  /// After blanks: consumes `kw` if the text continues with it (as txt2bin does,
  /// keywords inside a statement need no separator: `5bto1`).
  bool consume(llvm::StringRef kw);
  /// After blanks: consumes `kw` or reports "expected 'kw' <context>".
  bool expect(llvm::StringRef kw, const llvm::Twine &context);
  /// After blanks: an unsigned decimal number <= max, else reports
  /// "expected <what>" or "<what> N does not fit ... (0..max)".
  bool parseNumber(uint64_t &out, llvm::StringRef what, uint64_t max);
  /// After blanks: a rank number < numRanks(); with `wildcard`, `-1` gives AnySource.
  bool parseRank(uint32_t &out, llvm::StringRef what, bool wildcard);
  /// Optional clauses in array order, then the end of the statement.
  bool parseClauses(llvm::MutableArrayRef<Clause> clauses);
  /// The end of a statement: blanks, then an optional comment, then the end of the
  /// line (or of the file). `expected` describes what else could have come here; it
  /// is called only to build an error message.
  bool endStatement(llvm::function_ref<std::string()> expected) {
    skipBlanks();
    if (*p_ == '\n') {   // the common case, inline
      ++p_;
      return true;
    }
    return endStatementSlow(expected);
  }

  /// Adds the op of statement `st` in the current rank (and defines its label).
  void addOp(const OpStatement &st, OpKind kind, uint32_t peer, uint64_t size, uint32_t tag,
             uint32_t cpu, uint32_t nic);
  ScheduleBuilder &builder() { return *builder_; }

  /// The members of the communicators declared so far (the extended dialect's `comm`
  /// lines): each line may list every rank, so their sum is checked against -max-memory
  /// before they are stored.
  uint64_t communicatorMembers = 0;

private:
  static constexpr uint32_t NoOp = 0xFFFFFFFFu;
  struct Deferred {
    llvm::StringRef succLabel, predLabel;
    uint32_t succ, pred;   // NoOp until resolved
    DepKind kind;
  };

  bool parseHeader();
  const char *scanNumber(uint64_t &out, bool &overflow);
  bool endStatementSlow(llvm::function_ref<std::string()> expected);
  void parseDeclarations();
  void parseRankBlocks();
  void parseBlockBody();
  bool parseStatement();   // false: `rank` found inside the block (not consumed)
  void parseDependency(llvm::StringRef succ, DepKind kind);
  void finishBlock();
  void skipTrivia();
  bool skipComment();
  void skipLine();
  llvm::StringRef scanWord();
  const Dialect::Op *findOpExact(llvm::StringRef word) const;
  const Dialect::Op *findOpPrefix() const;
  void recoverOp(const OpStatement &st);
  void defineLabel(llvm::StringRef label, uint32_t op);
  uint32_t lookupLabel(llvm::StringRef label) const;
  const char *findLabelDefinition(llvm::StringRef label) const;
  void addDependency(llvm::StringRef succLabel, llvm::StringRef predLabel, DepKind kind);
  void advanceProgress();
  bool stop() const;

  DiagEngine &diags_;
  const Dialect &dialect_;
  Options opts_;
  const llvm::MemoryBuffer *buffer_;
  const char *begin_, *p_, *end_;
  const char *nextMark_;
  const char *dropped_;        // input before this was released from memory

  std::string opAlternatives_;   // "send|recv|calc", for messages
  const char *headerLoc_ = nullptr;
  uint32_t numRanks_ = 0;
  uint32_t rank_ = 0;          // rank of the current block
  uint32_t nextRank_ = 0;      // the rank whose block must come next
  std::vector<std::pair<uint32_t, uint32_t>> skipped_;   // [from, to) jumped over (errors)
  const char *blockBegin_ = nullptr;
  bool building_ = true;       // no error so far: ops go into builder_
  uint32_t opsInBlock_ = 0;
  std::optional<ScheduleBuilder> builder_;

  // Labels of the current block: `l<n>` in a table indexed by n, others hashed.
  // Entries carry the block's generation, so nothing is cleared between blocks.
  struct NumericEntry {
    uint32_t generation = 0, op = 0;
  };
  std::vector<NumericEntry> numericLabels_;
  llvm::DenseMap<llvm::StringRef, uint32_t> otherLabels_;
  uint32_t generation_ = 0;
  std::vector<Deferred> deferred_;   // dependencies from the first forward reference on
};

} // namespace infracc::goal
