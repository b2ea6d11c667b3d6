// Call-site attribution end to end: blas_call_sites multiplies through a
// cuBLAS-like library loaded as libcublas.so.13, which reaches the driver
// through its own frames. `stats call-sites`, `alloc-sites` and `code` must
// name the program's own lines (its @site: markers), never a frame of the
// library, the runtime or the driver, while the stacks themselves still hold
// the library's frames (what attribution stepped over).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"

namespace proflaunch::e2e {
namespace {

constexpr int kRepeat = 3;

struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, std::string>> rows;  // by column name
};

std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The one table of `stats --csv` output whose title contains `title`.
CsvTable csv_table(const std::string& out, const std::string& title) {
  CsvTable table;
  std::istringstream lines(out);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      if (inside && std::getline(lines, line)) table.columns = csv_cells(line);
      continue;
    }
    if (!inside || line.empty()) continue;
    const auto cells = csv_cells(line);
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < cells.size() && c < table.columns.size(); ++c) row[table.columns[c]] = cells[c];
    table.rows.push_back(row);
  }
  return table;
}

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

// A frame of the library, the runtime or the driver.
bool names_library_frame(const std::string& text) {
  return has(text, "libcublas") || has(text, "libcudart") || has(text, "libcuda.so") || has(text, "simblas");
}

class BlasCallSites : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* built = std::getenv("BLAS_CALL_SITES");  // unset: no nvcc, so no libsimblas
    if (built == nullptr || *built == '\0') GTEST_SKIP() << "libsimblas needs nvcc, which this build does not have";
    trace_ = dir_ / "blas.trace";
    const ProcessResult run =
        testing::run_process(traced(trace_, {built, "--repeat", std::to_string(kRepeat)}));
    ASSERT_TRUE(run.exited_with(0)) << run.describe();
    source_ = build_path("BLAS_CALL_SITES_SOURCE");
  }

  CsvTable stats(const std::vector<std::string>& options, const std::string& title) {
    std::vector<std::string> args = {"stats", trace_};
    args.insert(args.end(), options.begin(), options.end());
    const ProcessResult result = run_proftrace(args);
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
    output_ = result.out;
    return csv_table(result.out, title);
  }

  TempDir dir_;
  std::string trace_, source_, output_;
};

TEST_F(BlasCallSites, GpuTimeIsAttributedToTheLineThatCalledTheLibrary) {
  const CsvTable sites = stats({"--section", "call-sites", "--csv"}, "Call sites: GPU time");
  ASSERT_FALSE(sites.rows.empty()) << output_;
  const std::string gemm_line = native_line(source_, "gemm_call");
  int gemm_rows = 0;
  for (const auto& row : sites.rows) {
    const std::string& site = row.at("Call site");
    EXPECT_FALSE(names_library_frame(site)) << site;
    if (has(site, "multiply") && has(site, gemm_line)) {
      ++gemm_rows;
      EXPECT_GE(std::stoi(row.at("Operations")), kRepeat) << site;
      EXPECT_EQ(std::stoi(row.at("Operations")) % kRepeat, 0) << site;
      // What was stepped over is still in the stack: the library's own frames.
      EXPECT_TRUE(has(row.at("Stack (root > leaf)"), "simblas")) << row.at("Stack (root > leaf)");
    }
  }
  EXPECT_EQ(gemm_rows, 1) << "one row for the GEMM line " << gemm_line << "\n" << output_;
}

TEST_F(BlasCallSites, TheLibrarysWorkspaceIsAttributedToTheLineThatCreatedTheHandle) {
  const CsvTable sites = stats({"--section", "alloc-sites", "--csv"}, "Call sites: bytes allocated");
  const std::string create_line = native_line(source_, "blas_create");
  int create_rows = 0;
  for (const auto& row : sites.rows) {
    EXPECT_FALSE(names_library_frame(row.at("Call site"))) << row.at("Call site");
    if (has(row.at("Call site"), create_line)) {
      ++create_rows;
      EXPECT_TRUE(has(row.at("Stack (root > leaf)"), "simblas")) << row.at("Stack (root > leaf)");
    }
  }
  EXPECT_EQ(create_rows, 1) << output_;
}

TEST_F(BlasCallSites, TheCodeViewSumsByTheProgramsOwnFunctionsAndModule) {
  const std::string gemm_line = native_line(source_, "gemm_call");
  const CsvTable lines = stats({"--section", "code", "--csv"}, "Code:");
  bool gemm = false;
  for (const auto& row : lines.rows) {
    EXPECT_FALSE(names_library_frame(row.at("Line"))) << row.at("Line");
    if (has(row.at("Line"), gemm_line)) {
      gemm = true;
      EXPECT_EQ(std::stoi(row.at("Launches")) % kRepeat, 0);
      EXPECT_GT(std::stoull(row.at("GPU Time (ns)")), 0u);
    }
  }
  EXPECT_TRUE(gemm) << output_;

  const CsvTable modules = stats({"--section", "code", "--csv", "--by", "module"}, "Code:");
  ASSERT_FALSE(modules.rows.empty()) << output_;
  for (const auto& row : modules.rows) EXPECT_EQ(row.at("Module"), "blas_call_sites") << output_;
}

}  // namespace
}  // namespace proflaunch::e2e
