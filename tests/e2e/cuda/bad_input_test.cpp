// Bad input to proftrace info, dump and convert: garbage, an empty file, a
// file cut inside its header, a newer format version, an unknown required
// feature - each gives a clear one-line error naming the file and a
// non-zero exit, never a crash. A file cut or damaged after its header is
// recovered and the damage reported (convert --strict then exits 3); random
// damage never kills the tool.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <random>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class BadInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const ProcessResult run =
        testing::run_process(traced(*dir_ / "good.trace", {build_path("TRAINING_LOOP"), "--steps", "3"}));
    ASSERT_TRUE(run.exited_with(0)) << run.describe();
    good_ = new std::string(read_file(*dir_ / "good.trace"));
    ASSERT_GT(good_->size(), 1000u);
  }
  static void TearDownTestSuite() {
    delete good_;
    delete dir_;
  }

  // The three commands on `path`; each must exit with `expected_code`.
  static std::vector<ProcessResult> run_all(const std::string& path) {
    return {run_proftrace({"info", path}), run_proftrace({"dump", path}),
            run_proftrace({"convert", path, "-o", *dir_ / "out.json"})};
  }

  static TempDir* dir_;
  static std::string* good_;
};
TempDir* BadInput::dir_;
std::string* BadInput::good_;

void expect_clear_error(const std::vector<ProcessResult>& results, const std::string& path,
                        const std::string& reason) {
  for (const ProcessResult& result : results) {
    ASSERT_FALSE(WIFSIGNALED(result.status)) << result.describe();
    EXPECT_TRUE(result.exited_with(1)) << result.describe();
    EXPECT_EQ(result.err.rfind("proftrace: " + path + ": ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(reason), std::string::npos) << result.err;
  }
}

TEST_F(BadInput, Garbage) {
  std::mt19937 random(7);
  std::string garbage(4096, '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  write_file(*dir_ / "garbage.trace", garbage);
  expect_clear_error(run_all(*dir_ / "garbage.trace"), *dir_ / "garbage.trace", "not a proflaunch trace");
}

TEST_F(BadInput, Empty) {
  write_file(*dir_ / "empty.trace", "");
  expect_clear_error(run_all(*dir_ / "empty.trace"), *dir_ / "empty.trace", "empty");
}

TEST_F(BadInput, CutInsideTheHeader) {
  write_file(*dir_ / "cut.trace", good_->substr(0, 20));
  expect_clear_error(run_all(*dir_ / "cut.trace"), *dir_ / "cut.trace", "truncated");
}

TEST_F(BadInput, NewerFormatVersion) {
  std::string newer = *good_;
  newer[8] = 2;  // FileHeader.format_version, little-endian
  write_file(*dir_ / "newer.trace", newer);
  expect_clear_error(run_all(*dir_ / "newer.trace"), *dir_ / "newer.trace", "version 2");
}

TEST_F(BadInput, UnknownRequiredFeature) {
  std::string featured = *good_;
  featured[16] = 0x20;  // FileHeader.required_features
  write_file(*dir_ / "featured.trace", featured);
  expect_clear_error(run_all(*dir_ / "featured.trace"), *dir_ / "featured.trace", "0x20");
}

TEST_F(BadInput, CutInsideAChunkIsRecoveredAndReported) {
  write_file(*dir_ / "cut.trace", good_->substr(0, good_->size() - 100));
  const auto results = run_all(*dir_ / "cut.trace");
  for (const ProcessResult& result : results) ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(results[0].out.find("TRUNCATED"), std::string::npos) << results[0].out;
  EXPECT_NE(results[1].err.find("truncated"), std::string::npos) << results[1].err;
  EXPECT_NE(results[2].err.find("truncated"), std::string::npos) << results[2].err;
  const ProcessResult strict = run_proftrace({"convert", "--strict", *dir_ / "cut.trace", "-o", *dir_ / "s.json"});
  EXPECT_TRUE(strict.exited_with(3)) << strict.describe();
}

TEST_F(BadInput, RandomDamageNeverKillsTheTool) {
  std::mt19937 random(12345);
  for (int round = 0; round < 12; ++round) {
    std::string damaged = *good_;
    if (round % 3 == 0) damaged.resize(40 + random() % (damaged.size() - 40));
    for (int flips = 1 + random() % 8; flips > 0; --flips)
      damaged[40 + random() % (damaged.size() - 40)] = static_cast<char>(random());
    write_file(*dir_ / "damaged.trace", damaged);
    for (const ProcessResult& result : run_all(*dir_ / "damaged.trace")) {
      EXPECT_FALSE(WIFSIGNALED(result.status)) << "round " << round << ": " << result.describe();
      EXPECT_FALSE(result.timed_out);
    }
  }
}

}  // namespace
}  // namespace proflaunch::e2e
