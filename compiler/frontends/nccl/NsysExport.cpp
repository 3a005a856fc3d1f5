#include "compiler/frontends/nccl/NsysExport.h"

#include "support/Limits.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringRef.h>

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <memory>

namespace infracc::nccl {

namespace {

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), msg);
}

struct DbCloser {
  void operator()(sqlite3 *db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt *st) const { sqlite3_finalize(st); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

class Reader {
public:
  explicit Reader(sqlite3 *db) : db_(db) {}

  llvm::Expected<Stmt> prepare(const std::string &sql) {
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      return fail(llvm::Twine("cannot read it as an Nsight Systems export (") +
                  sqlite3_errmsg(db_) + ")");
    }
    return Stmt(st);
  }
  /// Steps `st`; false at the end. A broken database is an error.
  llvm::Expected<bool> step(sqlite3_stmt *st) {
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
      return true;
    if (rc == SQLITE_DONE)
      return false;
    return fail(llvm::Twine("cannot read it as an Nsight Systems export (") +
                sqlite3_errmsg(db_) + ")");
  }
  /// Runs `sql` and hands each result row to `row`; the first error ends it.
  llvm::Error each(const std::string &sql, llvm::function_ref<llvm::Error(sqlite3_stmt *)> row) {
    auto st = prepare(sql);
    if (!st)
      return st.takeError();
    for (;;) {
      auto more = step(st->get());
      if (!more)
        return more.takeError();
      if (!*more)
        return llvm::Error::success();
      if (llvm::Error e = row(st->get()))
        return e;
    }
  }
  bool hasTable(const char *name) {
    auto st = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
    if (!st) {
      llvm::consumeError(st.takeError());
      return false;
    }
    sqlite3_bind_text(st->get(), 1, name, -1, SQLITE_STATIC);
    return sqlite3_step(st->get()) == SQLITE_ROW;
  }
  bool hasColumn(const char *table, const char *column) {
    auto st = prepare(std::string("PRAGMA table_info(") + table + ")");
    if (!st) {
      llvm::consumeError(st.takeError());
      return false;
    }
    while (sqlite3_step(st->get()) == SQLITE_ROW)
      if (llvm::StringRef(reinterpret_cast<const char *>(sqlite3_column_text(st->get(), 1))) ==
          column)
        return true;
    return false;
  }

private:
  sqlite3 *db_;
};

std::string textOf(sqlite3_stmt *st, int col) {
  const unsigned char *t = sqlite3_column_text(st, col);
  return t ? std::string(reinterpret_cast<const char *>(t)) : std::string();
}

} // namespace

bool isSqliteHeader(llvm::StringRef head) {
  return head.starts_with(llvm::StringRef("SQLite format 3\0", 16));
}

llvm::Expected<NsysExport> readNsysExport(const std::string &path) {
  sqlite3 *raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK)
    return fail(llvm::Twine("cannot open it as an SQLite database (") +
                (raw ? sqlite3_errmsg(raw) : "out of memory") + ")");
  Reader r(db.get());
  // Opening is lazy: the first read says whether this is a database at all.
  if (llvm::Error e = r.each("SELECT count(*) FROM sqlite_master",
                             [](sqlite3_stmt *) { return llvm::Error::success(); })) {
    llvm::consumeError(std::move(e));
    return fail(llvm::Twine("cannot open it as an SQLite database (") + sqlite3_errmsg(raw) + ")");
  }
  NsysExport out;
  out.path = path;
  if (!r.hasTable("NVTX_EVENTS"))
    return fail("not an Nsight Systems export with NVTX events: it has no NVTX_EVENTS table "
                "(profile with 'nsys profile --trace=nvtx,cuda' and export with 'nsys export "
                "--type sqlite')");
  if (!r.hasTable("CUPTI_ACTIVITY_KIND_KERNEL"))
    return fail("the export has no CUDA kernels (table CUPTI_ACTIVITY_KIND_KERNEL): profile "
                "with 'nsys profile --trace=nvtx,cuda' so that NCCL's kernels are timed");
  if (!r.hasTable("PROCESSES") || !r.hasTable("StringIds"))
    return fail("the export lacks the PROCESSES or StringIds table; export the whole report "
                "with 'nsys export --type sqlite'");

  // The host: newer exports keep it in TARGET_INFO_SYSTEM_ENV as name/value rows.
  if (r.hasTable("TARGET_INFO_SYSTEM_ENV") && r.hasColumn("TARGET_INFO_SYSTEM_ENV", "name") &&
      r.hasColumn("TARGET_INFO_SYSTEM_ENV", "value"))
    if (llvm::Error e = r.each("SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
                               [&](sqlite3_stmt *st) {
                                 out.host = textOf(st, 0);
                                 return llvm::Error::success();
                               }))
      return e;

  // Before reading: what the NVTX table would take to hold.
  if (llvm::Error e = r.each(
          "SELECT count(*), COALESCE(sum(length(text)), 0) FROM NVTX_EVENTS",
          [&](sqlite3_stmt *st) -> llvm::Error {
            uint64_t rows = uint64_t(std::max<int64_t>(0, sqlite3_column_int64(st, 0)));
            uint64_t chars = uint64_t(std::max<int64_t>(0, sqlite3_column_int64(st, 1)));
            uint64_t each = sizeof(NvtxEvent) + (rows ? chars / rows : 0);
            if (auto msg = exceedsMemory("reading its " + std::to_string(rows) + " NVTX events",
                                         rows, each))
              return fail(*msg);
            return llvm::Error::success();
          }))
    return e;

  // NVTX strings: registered strings (textId) live in StringIds, others inline. Only
  // NCCL's (every one names its pid) and the profiler's start marks are kept.
  std::string textExpr = r.hasColumn("NVTX_EVENTS", "textId")
                             ? "COALESCE(e.text, (SELECT s.value FROM StringIds s WHERE s.id = "
                               "e.textId))"
                             : "e.text";
  if (llvm::Error e = r.each("SELECT e.rowid, e.start, COALESCE(e.end, e.start), " + textExpr +
                                 " FROM NVTX_EVENTS e ORDER BY e.start, e.rowid",
                             [&](sqlite3_stmt *st) {
                               std::string text = textOf(st, 3);
                               // Older exports write 0 for a mark's missing end.
                               int64_t start = sqlite3_column_int64(st, 1);
                               int64_t end = std::max<int64_t>(start, sqlite3_column_int64(st, 2));
                               if (llvm::StringRef(text).contains("pid"))
                                 out.nvtx.push_back({start, end,
                                                     uint64_t(sqlite3_column_int64(st, 0)),
                                                     std::move(text)});
                               return llvm::Error::success();
                             }))
    return e;

  // NCCL kernels, with the pid of the process that launched them.
  std::map<int64_t, int64_t> pidOf;
  if (llvm::Error e = r.each("SELECT globalPid, pid FROM PROCESSES", [&](sqlite3_stmt *st) {
        pidOf[sqlite3_column_int64(st, 0)] = sqlite3_column_int64(st, 1);
        return llvm::Error::success();
      }))
    return e;
  std::string device = r.hasColumn("CUPTI_ACTIVITY_KIND_KERNEL", "deviceId") ? "k.deviceId" : "0";
  if (llvm::Error e = r.each(
          "SELECT k.start, k.end, k.globalPid, s.value, " + device +
              " FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = "
              "k.demangledName ORDER BY k.start, k.rowid",
          [&](sqlite3_stmt *st) -> llvm::Error {
            std::string name = textOf(st, 3);
            if (!llvm::StringRef(name).starts_with("ncclKernel") &&
                !llvm::StringRef(name).starts_with("ncclDevKernel"))
              return llvm::Error::success();
            KernelEvent k;
            k.start = sqlite3_column_int64(st, 0);
            k.end = sqlite3_column_int64(st, 1);
            int64_t gpid = sqlite3_column_int64(st, 2);
            auto it = pidOf.find(gpid);
            if (it == pidOf.end() || it->second < 0 || it->second > INT32_MAX)
              return fail("an NCCL kernel (" + name + " at " + std::to_string(k.start) +
                          " ns) names process " + std::to_string(gpid) +
                          ", which the PROCESSES table does not list");
            k.pid = uint32_t(it->second);
            int64_t dev = sqlite3_column_int64(st, 4);
            k.device = dev < 0 || dev > 0xFFFF ? 0 : uint32_t(dev);
            if (k.end < k.start)
              return fail("an NCCL kernel (" + name + ") ends at " + std::to_string(k.end) +
                          " ns, before it starts (" + std::to_string(k.start) + " ns)");
            out.kernels.push_back(k);
            return llvm::Error::success();
          }))
    return e;
  return out;
}

} // namespace infracc::nccl
