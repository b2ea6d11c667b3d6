// A thin layer over the SQLite C API for the export: one connection set up
// for a bulk load, and prepared statements bound by position. Errors throw
// SqliteError with SQLite's message; the export catches it at the top and
// turns it into one line on stderr (nothing here runs inside a C callback).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace proflaunch::tools::sql {

class SqliteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, int64_t value);
  // uint64 values (addresses, handles, hashed ids) keep their bits: above
  // 2^63 they read back negative, and still compare and join exactly.
  Statement& bind_bits(int index, uint64_t value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, std::string_view text);
  Statement& bind_null(int index);
  Statement& bind(int index, std::optional<int64_t> value) {
    return value ? bind(index, *value) : bind_null(index);
  }
  // Runs an INSERT/UPDATE and resets the statement for the next row.
  void run();

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

class Database {
 public:
  // Creates `path` (which must not exist) for a bulk load: no journal and no
  // fsync until close, since a failed export deletes the file anyway.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  sqlite3* handle() { return db_; }
  // Closes the connection, reporting a failure to write the last pages.
  void close();

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace proflaunch::tools::sql
