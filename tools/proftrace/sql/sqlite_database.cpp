#include "tools/proftrace/sql/sqlite_database.h"

#include <sqlite3.h>

namespace proflaunch::tools::sql {

namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw SqliteError(std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &statement_,
                         nullptr) != SQLITE_OK)
    fail(db, "preparing '" + std::string(sql.substr(0, 60)) + "'");
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) fail(db_, "binding a value");
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: the text (often a temporary) is copied before the call returns.
  if (sqlite3_bind_text64(statement_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    fail(db_, "binding a text");
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) fail(db_, "binding NULL");
  return *this;
}

void Statement::run() {
  const int rc = sqlite3_step(statement_);
  sqlite3_reset(statement_);
  if (rc != SQLITE_DONE) fail(db_, "writing a row");
}

Database::Database(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError("cannot create the database: " + message);
  }
  // A bulk load into a file nobody else reads until it is renamed into
  // place: no rollback journal, no fsync. The page cache is bounded (32 MiB),
  // so memory does not grow with the trace; SQLite spills to the file.
  exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-32768; PRAGMA temp_store=FILE;");
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(std::string_view sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    throw SqliteError(text);
  }
}

void Database::close() {
  if (db_ == nullptr) return;
  sqlite3* db = db_;
  db_ = nullptr;
  if (sqlite3_close(db) != SQLITE_OK) {
    const std::string message = sqlite3_errmsg(db);
    sqlite3_close_v2(db);
    throw SqliteError("closing the database: " + message);
  }
}

}  // namespace proflaunch::tools::sql
