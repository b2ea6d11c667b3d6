// `stats --section recommendations` on a real nvcc-built program on the
// simulated stack (programs/recommendations_loop.cu): each mistake the
// program makes on purpose is named, with the program's own marked line
// among the call sites, and the rules it does not break find nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/unit/tools/json_value.h"

namespace proflaunch::e2e {
namespace {

using testing::JsonValue;

// "recommendations_loop.cu:<line of the @site:NAME marker>".
std::string marked_line(const std::string& path, const std::string& name) {
  std::ifstream file(path);
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    if (line.find("// @site:" + name) != std::string::npos)
      return "recommendations_loop.cu:" + std::to_string(number);
  }
  ADD_FAILURE() << "no @site:" << name << " in " << path;
  return "(no marker " + name + ")";
}

bool has(const std::string& text, const std::string& piece) { return text.find(piece) != std::string::npos; }

TEST(Recommendations, NameEachMistakeAtTheProgramsOwnLine) {
  TempDir dir;
  const ProcessResult run = ::proflaunch::testing::run_process(
      traced(dir / "x.trace", {build_path("RECOMMENDATIONS_LOOP")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult stats = run_proftrace({"stats", dir / "x.trace", "--json", "--section", "recommendations"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  std::string error;
  const auto document = ::proflaunch::testing::parse_json(stats.out, &error);
  ASSERT_TRUE(document.has_value()) << error << "\n" << stats.out;
  std::map<std::string, JsonValue> rows;
  for (const JsonValue& table : (*document)["tables"].items)
    if (table["section"].str() == "recommendations")
      for (const JsonValue& row : table["rows"].items) rows[row["Rule"].str()] = row;
  ASSERT_FALSE(rows.empty()) << stats.out;

  const std::string source = build_path("RECOMMENDATIONS_LOOP_SOURCE");
  const JsonValue& pageable = rows["pageable-sync-copy"];
  EXPECT_EQ(pageable["Result"].str(), "found") << stats.out;
  EXPECT_GE(pageable["Calls"].as_uint(), 10u) << "an upload and a read in each of 5 steps";
  EXPECT_TRUE(has(pageable["Call Sites"].str(), marked_line(source, "upload"))) << stats.out;

  const JsonValue& item = rows["item-read"];
  EXPECT_EQ(item["Result"].str(), "found") << stats.out;
  EXPECT_EQ(item["Calls"].as_uint(), 5u);
  EXPECT_EQ(item["Bytes"].as_uint(), 20u) << "a 4-byte read per step";
  EXPECT_EQ(item["Steps"].str(), "5/5");
  EXPECT_TRUE(has(item["Call Sites"].str(), marked_line(source, "item_read"))) << stats.out;

  const JsonValue& alloc = rows["steady-state-alloc"];
  EXPECT_EQ(alloc["Result"].str(), "found") << stats.out;
  EXPECT_EQ(alloc["Calls"].as_uint(), 8u) << "a cudaMalloc and a cudaFree in each of steps 2 to 5, not the free after the loop";
  EXPECT_EQ(alloc["Bytes"].as_uint(), 4u * 4096u);
  EXPECT_TRUE(has(alloc["Call Sites"].str(), marked_line(source, "scratch_alloc"))) << stats.out;
  EXPECT_TRUE(has(alloc["Call Sites"].str(), marked_line(source, "scratch_free"))) << stats.out;

  const JsonValue& grid = rows["small-grid"];
  EXPECT_EQ(grid["Result"].str(), "found") << stats.out;
  EXPECT_EQ(grid["Calls"].as_uint(), 5u) << "tiny_add<<<1, 32>>> in each step";
  EXPECT_TRUE(has(grid["Finding"].str(), "tiny_add(float*, float) (1 block on ")) << stats.out;
  EXPECT_TRUE(has(grid["Call Sites"].str(), marked_line(source, "tiny_kernel"))) << stats.out;

  // The GPU idles while the thread sleeps between the read and the free: a
  // gap in each step that has GPU work after it (steps 1 to 4), named by the
  // calls around the program's own CPU work.
  const JsonValue& gap = rows["gpu-idle-gap"];
  EXPECT_EQ(gap["Result"].str(), "found") << stats.out;
  EXPECT_GE(gap["Calls"].as_uint(), 4u) << stats.out;
  const std::string sites = gap["Call Sites"].str();
  const std::string first_site = sites.substr(0, sites.find(" | "));
  EXPECT_TRUE(has(first_site, "outside API calls after cudaMemcpy at ")) << sites;
  EXPECT_TRUE(has(first_site, marked_line(source, "item_read") + ")")) << "the call before the sleep\n" << sites;
  EXPECT_TRUE(has(first_site, "before cudaFree at ")) << sites;
  EXPECT_TRUE(has(first_site, marked_line(source, "scratch_free") + ")")) << "the call after it\n" << sites;
  EXPECT_TRUE(has(first_site, "(4 gaps, ")) << sites;

  // The program never synchronizes explicitly.
  EXPECT_EQ(rows["excessive-sync"]["Result"].str(), "nothing found") << stats.out;
  EXPECT_EQ(rows["excessive-sync"]["Calls"].as_uint(), 0u) << stats.out;
}

}  // namespace
}  // namespace proflaunch::e2e
