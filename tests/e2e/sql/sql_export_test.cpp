// proftrace export --sqlite end to end: training_loop and nvtx_ranges run
// under proflaunch on the simulated stack; the database's totals must equal
// what `proftrace stats --csv` prints for the same trace (kernel instances
// and GPU time per name, API calls, errors, host time and counted calls per
// name, NVTX ranges and host time per label), what the program says it
// copied, and what `proftrace dump` shows of the call stacks; and every id
// must join. stats and export share only the reader: the sums are computed
// by SQL on one side and by the stats sections on the other.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <regex>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

using Row = std::vector<std::string>;

// One CSV line of `stats --csv`, with its quoting ("a, b" and "" inside).
Row split_csv(const std::string& line) {
  Row cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The rows of the table whose title contains `title`.
std::vector<Row> csv_table(const std::string& out, const std::string& title) {
  std::vector<Row> rows;
  std::istringstream lines(out);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      std::getline(lines, line);  // the column names
      continue;
    }
    if (inside && !line.empty()) rows.push_back(split_csv(line));
  }
  return rows;
}

class Database {
 public:
  explicit Database(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
      ADD_FAILURE() << "cannot open " << path;
  }
  ~Database() { sqlite3_close(db_); }
  std::vector<Row> query(const std::string& sql) const {
    std::vector<Row> rows;
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    while (sqlite3_step(statement) == SQLITE_ROW) {
      Row row;
      for (int c = 0; c < sqlite3_column_count(statement); ++c) {
        const auto* text = sqlite3_column_text(statement, c);
        row.push_back(text != nullptr ? reinterpret_cast<const char*>(text) : "NULL");
      }
      rows.push_back(row);
    }
    sqlite3_finalize(statement);
    return rows;
  }
  std::string one(const std::string& sql) const {
    const auto rows = query(sql);
    return rows.size() == 1 && rows[0].size() == 1 ? rows[0][0] : "(not one value)";
  }

 private:
  sqlite3* db_ = nullptr;
};

// Keyed by the last cell (the name), the chosen columns.
std::map<std::string, Row> by_name(const std::vector<Row>& rows, const std::vector<size_t>& columns) {
  std::map<std::string, Row> result;
  for (const Row& row : rows) {
    Row picked;
    for (size_t c : columns) picked.push_back(c < row.size() ? (row[c] == "-" ? "0" : row[c]) : "?");
    result[row.back()] = picked;
  }
  return result;
}

struct Exported {
  std::string trace, database, stats, dump;
  ProcessResult run;
};

Exported run_and_export(const TempDir& dir, const std::vector<std::string>& program) {
  Exported e;
  e.trace = dir / "run.trace";
  e.database = dir / "run.sqlite";
  e.run = testing::run_process(traced(e.trace, program));
  EXPECT_TRUE(e.run.exited_with(0)) << e.run.describe();
  const ProcessResult exported = run_proftrace({"export", "--sqlite", e.database, e.trace});
  EXPECT_TRUE(exported.exited_with(0)) << exported.describe();
  const ProcessResult stats = run_proftrace({"stats", "--csv", e.trace});
  EXPECT_TRUE(stats.exited_with(0)) << stats.describe();
  e.stats = stats.out;
  const ProcessResult dump = run_proftrace({"dump", e.trace});
  EXPECT_TRUE(dump.exited_with(0)) << dump.describe();
  e.dump = dump.out;
  return e;
}

void expect_kernels_match_stats(const Exported& e, const Database& db) {
  const auto stats = by_name(csv_table(e.stats, "GPU kernels"), {2, 1});  // instances, total ns
  const auto sql = by_name(db.query("SELECT count(*), sum(k.gpu_duration_ns), coalesce(f.name, '<unnamed kernel>') "
                                    "FROM kernels_with_gpu_time k JOIN api_calls c ON c.id = k.api_call_id "
                                    "LEFT JOIN functions f ON f.id = k.function_id WHERE NOT c.captured GROUP BY 3"),
                           {0, 1});
  EXPECT_EQ(sql, stats);
}

void expect_api_calls_match_stats(const Exported& e, const Database& db) {
  // calls, total ns, errors, counted
  const auto stats = by_name(csv_table(e.stats, "API calls"), {2, 1, 6, 7});
  std::map<std::string, Row> sql = by_name(
      db.query("SELECT count(*), sum(CASE WHEN c.flags & 8 THEN 0 ELSE max(c.end_ns - c.begin_ns, 0) END), "
               "sum(c.result != 0), 0, a.name FROM api_calls c JOIN apis a ON a.id = c.api_id "
               "WHERE NOT c.carried GROUP BY a.name"),
      {0, 1, 2, 3});
  for (const Row& counted : db.query("SELECT sum(n.count), a.name FROM api_counts n JOIN apis a ON a.id = n.api_id "
                                     "GROUP BY a.name")) {
    Row& row = sql.try_emplace(counted[1], Row{"0", "0", "0", "0"}).first->second;
    row[3] = counted[0];
  }
  EXPECT_EQ(sql, stats);
}

void expect_nvtx_matches_stats(const Exported& e, const Database& db) {
  const auto stats = by_name(csv_table(e.stats, "NVTX ranges: host time"), {2, 1});  // instances, total ns
  const auto sql = by_name(db.query("SELECT count(*), sum(max(end_ns - begin_ns, 0)), "
                                    "coalesce(domain || ': ', '') || name FROM nvtx_ranges "
                                    "WHERE end_ns IS NOT NULL GROUP BY 3"),
                           {0, 1});
  EXPECT_EQ(sql, stats);
}

// Every non-NULL reference names an existing row.
void expect_ids_join(const Database& db) {
  const std::vector<std::tuple<std::string, std::string, std::string>> references = {
      {"threads", "process_id", "processes"},       {"devices", "process_id", "processes"},
      {"api_calls", "process_id", "processes"},     {"api_calls", "thread_id", "threads"},
      {"api_calls", "api_id", "apis"},              {"api_calls", "stack_id", "stacks"},
      {"api_counts", "api_id", "apis"},             {"kernels", "api_call_id", "api_calls"},
      {"kernels", "function_id", "functions"},      {"kernels", "device_id", "devices"},
      {"copies", "api_call_id", "api_calls"},       {"memsets", "api_call_id", "api_calls"},
      {"memory_operations", "api_call_id", "api_calls"}, {"gpu_activities", "device_id", "devices"},
      {"nvtx_ranges", "thread_id", "threads"},      {"stacks", "process_id", "processes"},
      {"stack_frames", "stack_id", "stacks"},       {"stack_frames", "frame_id", "frames"},
  };
  for (const auto& [table, column, target] : references)
    EXPECT_EQ(db.one("SELECT count(*) FROM " + table + " WHERE " + column + " IS NOT NULL AND " + column +
                     " NOT IN (SELECT id FROM " + target + ")"),
              "0")
        << table << "." << column << " -> " << target;
  // Each detail row's call is of its kind.
  EXPECT_EQ(db.one("SELECT count(*) FROM kernels k JOIN api_calls c ON c.id = k.api_call_id "
                   "WHERE c.record != 'kernel_launch' OR c.correlation_id != k.correlation_id"),
            "0");
  // A stack has exactly its frame_count frames, at depths 0..n-1.
  EXPECT_EQ(db.one("SELECT count(*) FROM stacks s WHERE s.frame_count != (SELECT count(*) FROM stack_frames f "
                   "WHERE f.stack_id = s.id AND f.depth < s.frame_count)"),
            "0");
}

TEST(SqlExport, TrainingLoopTotalsEqualStatsAndTheProgramsOwnCounts) {
  TempDir dir;
  const Exported e = run_and_export(dir, {build_path("TRAINING_LOOP"), "--steps", "4"});
  Database db(e.database);

  // Not vacuous: the program's launches are all there with GPU time.
  std::smatch counts;
  ASSERT_TRUE(std::regex_search(e.run.out, counts, std::regex(R"(gemms=(\d+) runtime_kernels=(\d+).* h2d_bytes=(\d+))")))
      << e.run.out;
  EXPECT_GE(std::stol(db.one("SELECT count(*) FROM kernels_with_gpu_time")), std::stol(counts[1]) + std::stol(counts[2]));
  EXPECT_EQ(db.one("SELECT sum(bytes) FROM copies WHERE direction = 'HtoD'"), counts[3].str());

  expect_kernels_match_stats(e, db);
  expect_api_calls_match_stats(e, db);
  expect_ids_join(db);

  // Every CallStack of the trace is on its call (stacks are on by default);
  // those of blocking libc calls (point 4: BlockingCall, not an API call) aside.
  long call_stacks = 0;
  std::istringstream dump(e.dump);
  for (std::string line; std::getline(dump, line);)
    call_stacks += line.rfind("CallStack ", 0) == 0 && line.find(" point=4 ") == std::string::npos;
  EXPECT_GT(call_stacks, 0);
  EXPECT_EQ(db.one("SELECT count(*) FROM api_calls WHERE stack_id IS NOT NULL"), std::to_string(call_stacks));
}

TEST(SqlExport, NvtxRangesEqualStats) {
  TempDir dir;
  const Exported e = run_and_export(dir, {build_path("NVTX_RANGES"), "--steps", "3"});
  Database db(e.database);
  ASSERT_FALSE(csv_table(e.stats, "NVTX ranges: host time").empty()) << e.stats;
  expect_nvtx_matches_stats(e, db);
  expect_api_calls_match_stats(e, db);
  expect_ids_join(db);
  // The range the program leaves open at exit has no end; stats counts it in a note.
  EXPECT_EQ(db.one("SELECT count(*) FROM nvtx_ranges WHERE name = 'left open' AND end_ns IS NULL"), "1");
  const std::string note = std::to_string(std::stol(db.one("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL"))) +
                           " ranges still open at the end";
  const ProcessResult text = run_proftrace({"stats", "--section", "nvtx", e.trace});  // notes are not in CSV
  EXPECT_NE(text.out.find(note), std::string::npos) << text.out;
  // The copies and memsets the steps made (1 MiB each), named by the runtime.
  EXPECT_EQ(db.query("SELECT a.name, count(*), sum(x.bytes) FROM copies x JOIN api_calls c ON c.id = x.api_call_id "
                     "JOIN apis a ON a.id = c.api_id GROUP BY a.name"),
            (std::vector<Row>{{"cudaMemcpyAsync", "3", std::to_string(3 << 20)}}));
  EXPECT_EQ(db.query("SELECT a.name, count(*), sum(x.bytes) FROM memsets x JOIN api_calls c ON c.id = x.api_call_id "
                     "JOIN apis a ON a.id = c.api_id GROUP BY a.name"),
            (std::vector<Row>{{"cudaMemsetAsync", "3", std::to_string(3 << 20)}}));
}

}  // namespace
}  // namespace proflaunch::e2e
