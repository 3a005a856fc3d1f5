#include "compiler/frontends/goal/GoalTextParser.h"

#include "compiler/frontends/goal/MappedInput.h"
#include "support/Diagnostics.h"
#include "support/Progress.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/MemoryBuffer.h>

#include <array>
#include <cassert>
#include <cstring>


namespace infracc::goal {

namespace {

enum : uint8_t { CAlpha = 1, CDigit = 2, CWordTail = 4 };

constexpr std::array<uint8_t, 256> makeClasses() {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c)
    t[c] = CAlpha | CWordTail;
  for (int c = 'A'; c <= 'Z'; ++c)
    t[c] = CAlpha | CWordTail;
  for (int c = '0'; c <= '9'; ++c)
    t[c] = CDigit | CWordTail;
  t['_'] = CWordTail;
  return t;
}
constexpr std::array<uint8_t, 256> Classes = makeClasses();

inline bool isAlpha(char c) { return Classes[static_cast<unsigned char>(c)] & CAlpha; }
inline bool isDigit(char c) { return Classes[static_cast<unsigned char>(c)] & CDigit; }
inline bool isWordTail(char c) { return Classes[static_cast<unsigned char>(c)] & CWordTail; }

inline bool startsWith(const char *p, llvm::StringRef kw) {
  // The buffer is NUL-terminated, so comparing byte by byte never reads past it.
  for (size_t i = 0; i < kw.size(); ++i)
    if (p[i] != kw[i])
      return false;
  return true;
}

// `l<n>` labels (no leading zeros) go to a table indexed by n below this bound.
constexpr uint32_t NumericLabelLimit = 1u << 22;

inline bool numericLabel(llvm::StringRef label, uint32_t &n) {
  if (label.size() < 2 || label.size() > 8 || label[0] != 'l')
    return false;
  if (label[1] == '0' && label.size() != 2)
    return false;
  uint32_t v = 0;
  for (size_t i = 1; i < label.size(); ++i) {
    if (!isDigit(label[i]))
      return false;
    v = v * 10 + uint32_t(label[i] - '0');
  }
  if (v >= NumericLabelLimit)
    return false;
  n = v;
  return true;
}

// How often the progress bar and the release of consumed input are updated (often
// enough that streaming conversion keeps a few MB of the input resident).
constexpr size_t MarkStride = size_t(2) << 20;

// What was found where something else was expected, for messages.
std::string describe(const char *p, const char *end) {
  if (p >= end)
    return "the end of the file";
  char c = *p;
  if (c == '\n' || (c == '\r' && p[1] == '\n'))
    return "the end of the line";
  if (isWordTail(c)) {
    const char *q = p;
    while (isWordTail(*q) && q - p < 40)
      ++q;
    return "'" + std::string(p, q) + "'";
  }
  if (c == '\r')
    return "a carriage return";
  if (c == '\0')
    return "a NUL byte";
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
    return "byte 0x" + llvm::utohexstr(static_cast<unsigned char>(c), /*LowerCase=*/true, 2);
  return std::string("'") + c + "'";
}

std::string quotedList(llvm::ArrayRef<llvm::StringRef> words, llvm::StringRef last) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      s += (i + 1 == words.size() && last.empty()) ? " or " : ", ";
    s += "'" + words[i].str() + "'";
  }
  if (!last.empty())
    s += (words.empty() ? "" : " or ") + last.str();
  return s;
}

// --- The plain dialect: send, recv, calc -------------------------------------------

bool parseMessage(TextParser &p, const OpStatement &st, bool isSend) {
  uint64_t size;
  if (!p.parseNumber(size, "message size", UINT64_MAX))
    return false;
  if (!p.expect("b", "after the message size (sizes are written like 1024b)"))
    return false;
  if (!p.expect(isSend ? "to" : "from",
                isSend ? "after the size: send <bytes>b to <rank>"
                       : "after the size: recv <bytes>b from <rank|-1>"))
    return false;
  uint32_t peer;
  if (!p.parseRank(peer, isSend ? "destination rank" : "source rank", /*wildcard=*/!isSend))
    return false;
  Clause clauses[] = {
      {.keyword = "tag", .max = 0xFFFFFFFEull, .what = "tag", .wildcard = true},
      {.keyword = "cpu", .max = ScheduleBuilder::MaxCpu, .what = "cpu index"},
      {.keyword = "nic", .max = ScheduleBuilder::MaxNic, .what = "nic index"},
  };
  if (!p.parseClauses(clauses))
    return false;
  uint32_t tag = 0;
  if (clauses[0].present)
    tag = clauses[0].value == UINT64_MAX ? AnyTag : static_cast<uint32_t>(clauses[0].value);
  p.addOp(st, isSend ? OpKind::Send : OpKind::Recv, peer, size, tag,
          static_cast<uint32_t>(clauses[1].value), static_cast<uint32_t>(clauses[2].value));
  return true;
}

bool parseSend(TextParser &p, const OpStatement &st) { return parseMessage(p, st, true); }
bool parseRecv(TextParser &p, const OpStatement &st) { return parseMessage(p, st, false); }

bool parseCalc(TextParser &p, const OpStatement &st) {
  uint64_t duration;
  if (!p.parseNumber(duration, "calc duration", UINT64_MAX))
    return false;
  Clause clauses[] = {{.keyword = "cpu", .max = ScheduleBuilder::MaxCpu, .what = "cpu index"}};
  if (!p.parseClauses(clauses))
    return false;
  p.addOp(st, OpKind::Calc, 0, duration, 0, static_cast<uint32_t>(clauses[0].value), 0);
  return true;
}

} // namespace

const Dialect &Dialect::plain() {
  static const Dialect d{{{"send", parseSend}, {"recv", parseRecv}, {"calc", parseCalc}}, {}};
  return d;
}

// --- Parser --------------------------------------------------------------------------

TextParser::TextParser(DiagEngine &diags, unsigned bufferId, const Dialect &dialect,
                       Options opts)
    : diags_(diags), dialect_(dialect), opts_(opts) {
  buffer_ = diags.sourceMgr().getMemoryBuffer(bufferId);
  begin_ = p_ = buffer_->getBufferStart();
  end_ = buffer_->getBufferEnd();
  assert(*end_ == '\0' && "the GOAL text parser needs a NUL-terminated buffer");
  dropped_ = begin_;
  nextMark_ = p_ + std::min<size_t>(MarkStride, size_t(end_ - p_) + 1);
  for (const Dialect::Op &op : dialect_.ops)
    opAlternatives_ += (opAlternatives_.empty() ? "" : "|") + op.keyword.str();
}

void TextParser::error(const char *loc, const llvm::Twine &msg) {
  diags_.error(llvm::SMLoc::getFromPointer(loc), msg);
  building_ = false;
}

bool TextParser::stop() const { return diags_.shouldStop(); }

void TextParser::advanceProgress() {
  if (opts_.progress)
    opts_.progress->update(uint64_t(p_ - begin_));
  releaseConsumed(*buffer_, dropped_, p_);
  nextMark_ = p_ + std::min<size_t>(MarkStride, size_t(end_ - p_) + 1);
}

std::optional<Schedule> TextParser::parse() {
  if (!parseHeader())
    return std::nullopt;
  builder_.emplace(numRanks_, opts_.keepLabels);
  if (opts_.keepSourceLocs)
    builder_->keepSourceLocs();
  if (opts_.streamTo) {
    builder_->streamTo(opts_.streamTo(numRanks_));
  } else {
    // Untouched reserved memory is not resident; this only saves regrowing copies.
    uint64_t size = uint64_t(end_ - begin_);
    builder_->reserve(size / 16, size / 16);
  }
  parseDeclarations();
  parseRankBlocks();
  if (stop() && p_ != end_)
    diags_.announceStop();
  if (opts_.progress)
    opts_.progress->update(uint64_t(p_ - begin_));
  if (!building_ || diags_.hasErrors())
    return std::nullopt;
  return builder_->finish();
}

void TextParser::skipLine() {
  const void *nl = std::memchr(p_, '\n', size_t(end_ - p_));
  p_ = nl ? static_cast<const char *>(nl) + 1 : end_;
}

bool TextParser::skipComment() {
  if (p_[1] == '/') {
    skipLine();
    return true;
  }
  if (p_[1] == '*') {
    const char *open = p_;
    size_t close = llvm::StringRef(p_ + 2, size_t(end_ - p_ - 2)).find("*/");
    if (close == llvm::StringRef::npos) {
      error(open, "unterminated comment: '/*' without a closing '*/'");
      p_ = end_;
    } else {
      p_ += 2 + close + 2;
    }
    return true;
  }
  return false;
}

void TextParser::skipTrivia() {
  for (;;) {
    skipBlanks();
    char c = *p_;
    if (c == '\n') {
      ++p_;
    } else if (c == '\r' && p_[1] == '\n') {
      p_ += 2;
    } else if (c == '/' && (p_[1] == '/' || p_[1] == '*')) {
      skipComment();
    } else {
      return;
    }
  }
}

llvm::StringRef TextParser::scanWord() {
  const char *start = p_;
  if (!isAlpha(*p_))
    return {};
  ++p_;
  while (isWordTail(*p_))
    ++p_;
  return llvm::StringRef(start, size_t(p_ - start));
}

bool TextParser::consume(llvm::StringRef kw) {
  skipBlanks();
  if (!startsWith(p_, kw))
    return false;
  p_ += kw.size();
  return true;
}

bool TextParser::expect(llvm::StringRef kw, const llvm::Twine &context) {
  if (consume(kw))
    return true;
  error(p_, "expected '" + kw + "' " + context + ", found " + describe(p_, end_));
  return false;
}

const char *TextParser::scanNumber(uint64_t &out, bool &overflow) {
  const char *loc = p_;
  while (isDigit(*p_))
    ++p_;
  uint64_t v = 0;
  overflow = false;
  if (p_ - loc <= 19) {   // cannot overflow 64 bits
    for (const char *q = loc; q < p_; ++q)
      v = v * 10 + uint64_t(*q - '0');
  } else {
    for (const char *q = loc; q < p_; ++q) {
      overflow |= __builtin_mul_overflow(v, 10, &v);
      overflow |= __builtin_add_overflow(v, uint64_t(*q - '0'), &v);
    }
  }
  out = v;
  return loc;
}

bool TextParser::parseNumber(uint64_t &out, llvm::StringRef what, uint64_t max) {
  skipBlanks();
  if (!isDigit(*p_)) {
    error(p_, "expected a number (" + what + "), found " + describe(p_, end_));
    return false;
  }
  bool overflow;
  const char *loc = scanNumber(out, overflow);
  if (overflow || out > max) {
    llvm::StringRef digits(loc, size_t(p_ - loc));
    error(loc, what + " " + digits + " is too large (at most " + llvm::Twine(max) +
                   (what == "tag" ? "; -1 means any tag" : "") + ")");
    return false;
  }
  return true;
}

bool TextParser::parseRank(uint32_t &out, llvm::StringRef what, bool wildcard) {
  skipBlanks();
  const char *loc = p_;
  if (p_[0] == '-' && p_[1] == '1') {
    if (wildcard) {
      p_ += 2;
      out = AnySource;
      return true;
    }
    error(loc, what + " cannot be -1: only a recv's source may be -1 (any source)");
    return false;
  }
  if (!isDigit(*p_)) {
    error(p_, "expected a number (" + what + "), found " + describe(p_, end_));
    return false;
  }
  uint64_t v;
  bool overflow;
  scanNumber(v, overflow);
  if (overflow || v >= numRanks_) {
    error(loc, what + " " + llvm::StringRef(loc, size_t(p_ - loc)) +
                   " is out of range: num_ranks is " + llvm::Twine(numRanks_) +
                   ", so ranks are 0.." + llvm::Twine(numRanks_ - 1));
    return false;
  }
  out = static_cast<uint32_t>(v);
  return true;
}

bool TextParser::parseClauses(llvm::MutableArrayRef<Clause> clauses) {
  size_t next = 0;
  auto expected = [&] {
    llvm::SmallVector<llvm::StringRef, 4> kws;
    for (size_t k = next; k < clauses.size(); ++k)
      kws.push_back(clauses[k].keyword);
    return quotedList(kws, "the end of the line");
  };
  for (;;) {
    skipBlanks();
    char c = *p_;
    if (c == '\n' || c == '\r' || c == '/' || p_ == end_)
      return endStatement(expected);
    size_t i = 0;
    while (i < clauses.size() && !startsWith(p_, clauses[i].keyword))
      ++i;
    if (i == clauses.size()) {
      error(p_, "expected " + expected() + ", found " + describe(p_, end_));
      return false;
    }
    if (i < next) {
      if (clauses[i].present) {
        error(p_, "'" + clauses[i].keyword + "' is given twice");
      } else {
        llvm::SmallVector<llvm::StringRef, 4> order;
        for (const Clause &cl : clauses)
          order.push_back(cl.keyword);
        error(p_, "'" + clauses[i].keyword + "' must come before '" + clauses[next - 1].keyword +
                      "' (clauses go in the order " + llvm::join(order, ", ") + ")");
      }
      return false;
    }
    p_ += clauses[i].keyword.size();
    skipBlanks();
    if (clauses[i].wildcard && p_[0] == '-' && p_[1] == '1') {
      p_ += 2;
      clauses[i].value = UINT64_MAX;
    } else if (!parseNumber(clauses[i].value, clauses[i].what, clauses[i].max)) {
      return false;
    }
    clauses[i].present = true;
    next = i + 1;
  }
}

bool TextParser::endStatementSlow(llvm::function_ref<std::string()> expected) {
  for (;;) {
    skipBlanks();
    char c = *p_;
    if (c == '\n') {
      ++p_;
      return true;
    }
    if (c == '\r' && p_[1] == '\n') {
      p_ += 2;
      return true;
    }
    if (p_ == end_)
      return true;
    if (c == '/' && p_[1] == '/') {
      skipLine();
      return true;
    }
    if (c == '/' && p_[1] == '*') {
      skipComment();
      continue;
    }
    error(p_, "expected " + expected() + ", found " + describe(p_, end_));
    return false;
  }
}

bool TextParser::parseHeader() {
  skipTrivia();
  const char *loc = p_;
  llvm::StringRef word = scanWord();
  if (word != "num_ranks") {
    if (p_ == end_ && word.empty())
      error(loc, "empty GOAL file: expected 'num_ranks <n>' followed by the rank blocks");
    else
      error(loc, "expected 'num_ranks <n>' at the start of a GOAL file, found " +
                     describe(loc, end_));
    return false;
  }
  headerLoc_ = loc;
  skipBlanks();
  const char *numLoc = p_;
  uint64_t n;
  if (!parseNumber(n, "number of ranks", UINT32_MAX))
    return false;
  if (n == 0) {
    error(numLoc, "num_ranks must be at least 1");
    return false;
  }
  // Every rank needs a block of at least 8 bytes ("rank 0{}"): a count the file cannot
  // hold is refused before anything per rank (the world communicator) is allocated.
  // Small counts are left to the end, where the missing blocks are named.
  uint64_t size = uint64_t(end_ - begin_);
  if (n > size / 8 && n > (uint64_t(1) << 20)) {
    error(numLoc, "num_ranks is " + llvm::Twine(n) + ", but this file of " + llvm::Twine(size) +
                      " bytes has room for at most " + llvm::Twine(size / 8) +
                      " rank blocks (every rank needs one, e.g. 'rank 5 {}')");
    return false;
  }
  numRanks_ = static_cast<uint32_t>(n);
  if (!endStatement(
          [&] { return "the end of the line after 'num_ranks " + std::to_string(n) + "'"; }))
    skipLine();
  return true;
}

void TextParser::parseDeclarations() {
  for (;;) {
    skipTrivia();
    const char *loc = p_;
    llvm::StringRef word = scanWord();
    const Dialect::Decl *decl = nullptr;
    for (const Dialect::Decl &d : dialect_.declarations)
      if (d.keyword == word)
        decl = &d;
    if (!decl) {
      p_ = loc;   // `rank`, or something parseRankBlocks reports
      return;
    }
    if (!decl->parse(*this, loc))
      skipLine();
    if (stop())
      return;
  }
}

void TextParser::parseRankBlocks() {
  for (;;) {
    if (p_ >= nextMark_)
      advanceProgress();
    if (stop())
      return;
    skipTrivia();
    if (p_ == end_)
      break;
    const char *loc = p_;
    llvm::StringRef word = scanWord();
    if (word != "rank") {
      if (word == "num_ranks")
        error(loc, "'num_ranks' appears a second time; it belongs once at the start of the file");
      else if (*loc == '}')
        error(loc, "'}' without an open rank block");
      else if (dialect_.declarations.empty() || nextRank_ > 0)
        error(loc, "expected 'rank <n> {', found " + describe(loc, end_) +
                       "; statements belong inside a rank block");
      else
        error(loc, "expected a declaration or 'rank <n> {', found " + describe(loc, end_));
      skipLine();
      continue;
    }
    skipBlanks();
    const char *numLoc = p_;
    uint64_t r;
    if (!parseNumber(r, "rank number", UINT32_MAX)) {
      skipLine();
      continue;
    }
    if (!expect("{", "after 'rank " + std::to_string(r) + "'")) {
      // Parse the block anyway: its statements may hold more errors worth reporting.
    }
    if (r >= numRanks_) {
      error(numLoc, "rank " + llvm::Twine(r) + " is out of range: num_ranks is " +
                        llvm::Twine(numRanks_) + ", so rank blocks are 0.." +
                        llvm::Twine(numRanks_ - 1));
    } else if (r > nextRank_) {
      error(numLoc, "the block of rank " + llvm::Twine(r) + " comes before the block of rank " +
                        llvm::Twine(nextRank_) + "; rank blocks must appear in order 0, 1, ..., " +
                        llvm::Twine(numRanks_ - 1));
      skipped_.push_back({nextRank_, static_cast<uint32_t>(r)});
    } else if (r < nextRank_) {
      // A block that was skipped over comes late (already reported), or a repetition.
      auto late = llvm::find_if(skipped_, [&](auto &iv) { return iv.first <= r && r < iv.second; });
      if (late == skipped_.end()) {
        error(numLoc, "a second block for rank " + llvm::Twine(r) +
                          "; each rank has one block, in order 0, 1, ..., " +
                          llvm::Twine(numRanks_ - 1));
      } else {
        auto [from, to] = *late;
        skipped_.erase(late);
        if (from < r)
          skipped_.push_back({from, static_cast<uint32_t>(r)});
        if (r + 1 < to)
          skipped_.push_back({static_cast<uint32_t>(r) + 1, to});
      }
    }
    rank_ = static_cast<uint32_t>(r);
    if (r < numRanks_ && r >= nextRank_)
      nextRank_ = rank_ + 1;
    if (building_)
      builder_->beginRank(rank_);
    blockBegin_ = loc;
    ++generation_;
    opsInBlock_ = 0;
    otherLabels_.clear();
    deferred_.clear();
    parseBlockBody();
    finishBlock();
  }
  if (nextRank_ < numRanks_)
    skipped_.push_back({nextRank_, numRanks_});
  if (!skipped_.empty()) {
    llvm::sort(skipped_);
    uint32_t count = 0;
    std::string list;
    for (auto [from, to] : skipped_) {
      count += to - from;
      list += (list.empty() ? "" : ", ") + std::to_string(from);
      if (to - from > 1)
        list += ".." + std::to_string(to - 1);
    }
    error(headerLoc_, "num_ranks is " + llvm::Twine(numRanks_) + " but " +
                          (count == 1 ? "rank " : "ranks ") + list +
                          (count == 1 ? " has" : " have") +
                          " no block (an empty block is 'rank <n> {}')");
  }
}

void TextParser::parseBlockBody() {
  for (;;) {
    if (p_ >= nextMark_)
      advanceProgress();
    skipTrivia();
    char c = *p_;
    if (isAlpha(c)) {
      if (!parseStatement())
        return;   // `rank` inside the block, reported
      if (stop())
        return;
      continue;
    }
    if (c == '}') {
      ++p_;
      return;
    }
    if (p_ == end_) {
      error(blockBegin_, "the block of rank " + llvm::Twine(rank_) +
                             " is not closed: '}' is missing before the end of the file");
      return;
    }
    error(p_, "expected a statement ('<label>: " + opAlternatives_ +
                  " ...' or '<label> requires <label>') or '}', found " + describe(p_, end_));
    skipLine();
  }
}

const Dialect::Op *TextParser::findOpExact(llvm::StringRef word) const {
  for (const Dialect::Op &op : dialect_.ops)
    if (op.keyword == word)
      return &op;
  return nullptr;
}

const Dialect::Op *TextParser::findOpPrefix() const {
  const Dialect::Op *best = nullptr;
  for (const Dialect::Op &op : dialect_.ops)
    if (op.keyword[0] == *p_ && startsWith(p_, op.keyword) &&
        (!best || op.keyword.size() > best->keyword.size()))
      best = &op;
  return best;
}

bool TextParser::parseStatement() {
  const char *start = p_;
  llvm::StringRef word = scanWord();
  if (const Dialect::Op *op = findOpExact(word)) {
    OpStatement st{{}, start, start};
    if (!op->parse(*this, st)) {
      recoverOp(st);
      skipLine();
    }
    return true;
  }
  if (word == "rank") {
    error(start, "'rank' inside the block of rank " + llvm::Twine(rank_) +
                     ": is the '}' of rank " + llvm::Twine(rank_) + " missing?");
    p_ = start;
    return false;
  }
  if (word == "num_ranks") {
    error(start, "'num_ranks' belongs once at the start of the file, not inside a rank block");
    skipLine();
    return true;
  }
  // A label: `label: op ...` or `label requires label`.
  skipBlanks();
  if (*p_ == ':') {
    ++p_;
    skipBlanks();
    const char *kw = p_;
    OpStatement st{word, start, kw};
    const Dialect::Op *op = findOpPrefix();
    if (!op) {
      llvm::SmallVector<llvm::StringRef, 8> kws;
      for (const Dialect::Op &o : dialect_.ops)
        kws.push_back(o.keyword);
      error(kw, "expected an operation after '" + word + ":' (" + quotedList(kws, "") +
                    "), found " + describe(kw, end_));
      recoverOp(st);
      skipLine();
      return true;
    }
    p_ += op->keyword.size();
    if (!op->parse(*this, st)) {
      recoverOp(st);
      skipLine();
    }
    return true;
  }
  if (consume("requires")) {
    parseDependency(word, DepKind::Requires);
  } else if (consume("irequires")) {
    parseDependency(word, DepKind::IRequires);
  } else {
    std::string hint;
    for (const Dialect::Op &op : dialect_.ops)
      if (word.size() > op.keyword.size() && word.starts_with(op.keyword) &&
          isDigit(word[op.keyword.size()]))
        hint = " ('" + word.str() + "' is read as a label; write '" + op.keyword.str() + " " +
               word.drop_front(op.keyword.size()).str() + "')";
    error(p_, "expected ':' or 'requires'/'irequires' after the label '" + word + "', found " +
                  describe(p_, end_) + hint);
    skipLine();
  }
  return true;
}

void TextParser::parseDependency(llvm::StringRef succ, DepKind kind) {
  skipBlanks();
  const char *loc = p_;
  llvm::StringRef pred = scanWord();
  llvm::StringRef kw = kind == DepKind::Requires ? "requires" : "irequires";
  if (pred.empty()) {
    error(loc, "expected a label after '" + kw + "', found " + describe(loc, end_));
    skipLine();
    return;
  }
  if (!endStatement([&] {
        return "the end of the line after '" + succ.str() + " " + kw.str() + " " + pred.str() + "'";
      })) {
    skipLine();
    return;
  }
  addDependency(succ, pred, kind);
}

void TextParser::recoverOp(const OpStatement &st) {
  // The statement was reported; define its label anyway so that later dependencies
  // on it do not add "no operation labelled" errors.
  if (!st.label.empty() && lookupLabel(st.label) == NoOp)
    defineLabel(st.label, opsInBlock_++);
}

void TextParser::addOp(const OpStatement &st, OpKind kind, uint32_t peer, uint64_t size,
                       uint32_t tag, uint32_t cpu, uint32_t nic) {
  uint32_t op = opsInBlock_++;
  if (building_) {
    Schedule::OpIndex i = builder_->addOp(kind, peer, size, tag, cpu, nic, st.label);
    if (opts_.keepSourceLocs)
      builder_->setSourceLoc(i, llvm::SMLoc::getFromPointer(st.begin));
  }
  if (!st.label.empty())
    defineLabel(st.label, op);
}

uint32_t TextParser::lookupLabel(llvm::StringRef label) const {
  uint32_t n;
  if (numericLabel(label, n)) {
    if (n < numericLabels_.size() && numericLabels_[n].generation == generation_)
      return numericLabels_[n].op;
    return NoOp;
  }
  auto it = otherLabels_.find(label);
  return it == otherLabels_.end() ? NoOp : it->second;
}

void TextParser::defineLabel(llvm::StringRef label, uint32_t op) {
  uint32_t n;
  bool fresh;
  if (numericLabel(label, n)) {
    if (n >= numericLabels_.size())
      numericLabels_.resize(std::min<size_t>(std::max<size_t>(size_t(n) + 1,
                                                              numericLabels_.size() * 2),
                                             NumericLabelLimit));
    NumericEntry &e = numericLabels_[n];
    fresh = e.generation != generation_;
    if (fresh)
      e = {generation_, op};
  } else {
    fresh = otherLabels_.try_emplace(label, op).second;
  }
  if (fresh)
    return;
  error(label.data(), "label '" + label + "' is already used in rank " + llvm::Twine(rank_) +
                          "; labels must be unique within a rank block");
  if (const char *first = findLabelDefinition(label))
    diags_.note(llvm::SMLoc::getFromPointer(first), "'" + label + "' was first defined here");
}

const char *TextParser::findLabelDefinition(llvm::StringRef label) const {
  // Error path only: search the block's text for `label` followed by ':'.
  llvm::StringRef block(blockBegin_, size_t(label.data() - blockBegin_));
  for (size_t at = block.find(label); at != llvm::StringRef::npos;
       at = block.find(label, at + 1)) {
    if (at > 0 && isWordTail(block[at - 1]))
      continue;
    const char *q = block.data() + at + label.size();
    if (isWordTail(*q))
      continue;
    while (*q == ' ' || *q == '\t')
      ++q;
    if (*q == ':')
      return block.data() + at;
  }
  return nullptr;
}

void TextParser::addDependency(llvm::StringRef succLabel, llvm::StringRef predLabel,
                               DepKind kind) {
  uint32_t succ = lookupLabel(succLabel), pred = lookupLabel(predLabel);
  // Dependencies go to the builder in text order (it keeps that order per op); after
  // the first forward reference they wait for the end of the block.
  if (deferred_.empty() && succ != NoOp && pred != NoOp) {
    if (building_)
      builder_->addDependency(succ, pred, kind);
    return;
  }
  deferred_.push_back({succLabel, predLabel, succ, pred, kind});
}

void TextParser::finishBlock() {
  for (Deferred &d : deferred_) {
    if (d.succ == NoOp)
      d.succ = lookupLabel(d.succLabel);
    if (d.pred == NoOp)
      d.pred = lookupLabel(d.predLabel);
    for (auto [label, op] : {std::pair(d.succLabel, d.succ), std::pair(d.predLabel, d.pred)})
      if (op == NoOp)
        error(label.data(), "no operation in rank " + llvm::Twine(rank_) + " is labelled '" +
                                label + "'");
    if (building_)
      builder_->addDependency(d.succ, d.pred, d.kind);
  }
  deferred_.clear();
  if (building_)
    builder_->endRank();
}

} // namespace infracc::goal
