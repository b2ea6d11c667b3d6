// The shim's view of one real interpreter (PYTHON_UNDER_TEST, one meson test
// per CPython version found): the layout picked for its version, the sizes
// its type objects give code and frame objects (what the shim checks at
// start), and the line of every instruction of many code objects decoded
// from the raw line table by the shim's decoder, against the line the
// interpreter itself gives (python_line_tables.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "preload/stacks/python_interpreter.h"
#include "preload/stacks/python_line_table.h"
#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::stacks {
namespace {

struct CodeLines {
  std::string name;
  int32_t first_line = 0;
  std::vector<uint8_t> table;
  std::vector<int32_t> lines;  // per code unit, as the interpreter says
};

struct InterpreterFacts {
  unsigned major = 0;
  unsigned minor = 0;
  std::map<std::string, uint64_t> basic_sizes;
  std::vector<CodeLines> code;
};

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  if (hex == "-") return bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

InterpreterFacts parse(const std::string& text) {
  InterpreterFacts facts;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string what;
    fields >> what;
    if (what == "version") {
      fields >> facts.major >> facts.minor;
    } else if (what == "basicsize") {
      std::string type;
      uint64_t size = 0;
      fields >> type >> size;
      facts.basic_sizes[type] = size;
    } else if (what == "code") {
      CodeLines code;
      std::string hex;
      fields >> code.name >> code.first_line >> hex;
      code.table = from_hex(hex);
      facts.code.push_back(std::move(code));
    } else if (what == "lines" && !facts.code.empty()) {
      for (int32_t value; fields >> value;) facts.code.back().lines.push_back(value);
    }
  }
  return facts;
}

class PythonInterpreterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* python = std::getenv("PYTHON_UNDER_TEST");
    if (python == nullptr || access(python, X_OK) != 0)
      GTEST_SKIP() << "no interpreter: PYTHON_UNDER_TEST=" << (python ? python : "(unset)");
    testing::RunOptions options;
    options.argv = {python, PYTHON_LINE_TABLES_PY};
    options.timeout_ms = 120000;
    const testing::ProcessResult run = testing::run_process(options);
    ASSERT_TRUE(run.exited_with(0)) << run.describe();
    facts_ = parse(run.out);
    ASSERT_NE(facts_.major, 0u) << run.out.substr(0, 200);
    layout_ = python_layout_for(facts_.major, facts_.minor);
    ASSERT_NE(layout_, nullptr) << "no layout for CPython " << facts_.major << "." << facts_.minor;
  }

  InterpreterFacts facts_;
  const PythonLayout* layout_ = nullptr;
};

// What find_python_interpreter() compares at start: a mismatch would make
// the shim refuse this interpreter, and the stacks have no Python frames.
TEST_F(PythonInterpreterTest, TypeSizesAreThoseOfTheLayout) {
  EXPECT_EQ(layout_->major, facts_.major);
  EXPECT_EQ(layout_->minor, facts_.minor);
  EXPECT_EQ(facts_.basic_sizes.at("code"), layout_->code_basic_size);
  if (layout_->frame_basic_size != kAbsent) {
    EXPECT_EQ(facts_.basic_sizes.at("frame"), layout_->frame_basic_size);
  }
}

TEST_F(PythonInterpreterTest, LineOfEveryInstructionIsTheInterpretersOwn) {
  size_t units = 0;
  size_t without_line = 0;
  ASSERT_GT(facts_.code.size(), 100u);
  for (const CodeLines& code : facts_.code) {
    for (size_t unit = 0; unit < code.lines.size(); ++unit) {
      const int32_t line = line_of_code_unit(layout_->line_table, code.table.data(), code.table.size(),
                                             code.first_line, static_cast<int64_t>(unit));
      ASSERT_EQ(line, code.lines[unit]) << code.name << " (first line " << code.first_line << "), code unit "
                                        << unit << " of " << code.lines.size();
      ++units;
      without_line += code.lines[unit] < 0;
    }
  }
  // Enough to mean something: the samples alone have hundreds of units.
  EXPECT_GT(units, 10000u);
  // Before the first instruction, the interpreter says the first line.
  EXPECT_EQ(line_of_code_unit(layout_->line_table, facts_.code[0].table.data(), facts_.code[0].table.size(), 42, -1),
            42);
  std::printf("CPython %u.%u: %zu code objects, %zu code units (%zu without a line) decode as the interpreter says\n",
              facts_.major, facts_.minor, facts_.code.size(), units, without_line);
}

}  // namespace
}  // namespace proflaunch::stacks
