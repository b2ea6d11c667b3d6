// Python frames, with no change to the program, on one CPython interpreter:
// PYTHON_UNDER_TEST, one meson test per version found (3.9 to 3.13) and
// Debian's /usr/bin/python3. A layout that is wrong for the version shows
// as missing or wrong frames, names or lines here.
//  - ctypes_ops.py (tests/simgpu/programs/python_ctypes) calls its extension
//    through ctypes.CDLL, which RELEASES the GIL around every foreign call -
//    as torch does inside its ops - under the default stack depth;
//  - python_chains.py makes a cudaMemset from each kind of call chain
//    (methods, __init__, nested functions, lambdas, generators, a coroutine,
//    a callback from C, a thread, non-ASCII names; GIL released and held)
//    and writes down, on the line of each call, the interpreter's own view
//    of its stack (sys._getframe): the oracle the trace must equal.
// Each CUDA call's stack must show the script's frames, merged with the
// native frames, root first and the API last.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"
#include "tests/unit/tools/json_value.h"

namespace proflaunch::e2e {
namespace {

struct Interpreter {
  std::string path;
  int minor = 0;
};

// The interpreter under test, or why there is none.
Interpreter interpreter_under_test(std::string* why) {
  const char* path = std::getenv("PYTHON_UNDER_TEST");
  if (path == nullptr || access(path, X_OK) != 0) {
    *why = std::string("no interpreter: PYTHON_UNDER_TEST=") + (path ? path : "(unset)");
    return {};
  }
  RunOptions options;
  options.argv = {path, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"};
  const ProcessResult version = testing::run_process(options);
  int major = 0;
  int minor = 0;
  std::istringstream(version.out) >> major >> minor;
  if (!version.exited_with(0) || major != 3) {
    *why = std::string(path) + " does not say its version: " + version.describe();
    return {};
  }
  return {path, minor};
}

#define INTERPRETER_OR_SKIP(name)                     \
  std::string why_no_interpreter;                     \
  const Interpreter name = interpreter_under_test(&why_no_interpreter); \
  if (name.path.empty()) GTEST_SKIP() << why_no_interpreter

// How a function shows: its qualified name from 3.11 (co_qualname), its bare
// name before (co_name; the frame does not reach the function object).
std::string shown_function(const std::string& qualified, const Interpreter& python) {
  if (python.minor >= 11) return qualified;
  return qualified.substr(qualified.rfind('.') + 1);
}

// The 1-based lines of `path` containing `text`, in order.
std::vector<int> lines_containing(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::vector<int> lines;
  int number = 0;
  for (std::string line; std::getline(in, line);)
    if (++number, line.find(text) != std::string::npos) lines.push_back(number);
  return lines;
}

std::string python_frame(const std::string& script, int line, const std::string& function) {
  return script + ":" + std::to_string(line) + " " + function;
}

// The Python frames of a merged stack ("FILE.py:LINE FUNCTION"; native frames
// read "FUNCTION (FILE:LINE)" or "0x... (MODULE+0x...)"), in order.
std::vector<std::string> python_frames_of(const std::vector<std::string>& frames) {
  static const std::regex python(R"(^.+\.py:-?[0-9]+ [^ ]+$)");
  std::vector<std::string> found;
  for (const std::string& frame : frames)
    if (std::regex_match(frame, python)) found.push_back(frame);
  return found;
}

// The first (last) frame containing `piece`, -1 when none does.
ptrdiff_t index_of(const std::vector<std::string>& frames, const std::string& piece) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].find(piece) != std::string::npos) return static_cast<ptrdiff_t>(i);
  return -1;
}

ptrdiff_t last_index_of(const std::vector<std::string>& frames, const std::string& piece) {
  for (size_t i = frames.size(); i-- > 0;)
    if (frames[i].find(piece) != std::string::npos) return static_cast<ptrdiff_t>(i);
  return -1;
}

TEST(PythonStacks, CtypesCallsWithoutTheGilShowTheirPythonLines) {
  INTERPRETER_OR_SKIP(python);
  const std::string script = build_path("CTYPES_OPS");
  TempDir dir;
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {python.path, script, build_path("SIMTENSOR_EXT")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.err.find("Python frames"), std::string::npos) << run.err;
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;

  // The script's copies in order: upload, copy, download, download.
  std::vector<int> copy_lines;
  for (const char* call : {"ext.simtensor_upload(", "ext.simtensor_copy(", "ext.simtensor_download("})
    for (int line : lines_containing(script, call)) copy_lines.push_back(line);
  std::sort(copy_lines.begin(), copy_lines.end());
  const int module_line = lines_containing(script, "sys.exit(main())").at(0);

  const auto copies = stacks.named("cudaMemcpy");
  ASSERT_EQ(copies.size(), copy_lines.size());
  for (size_t i = 0; i < copies.size(); ++i) {
    // Python frames first (the interpreter's own native frames replaced by
    // them), then the native frames of the call (ctypes, libffi, the
    // runtime), then the API.
    EXPECT_EQ(python_frames_of(copies[i]->frames),
              (std::vector<std::string>{python_frame(script, module_line, "<module>"),
                                        python_frame(script, copy_lines[i], "main")}))
        << "copy " << i << ":\n" << joined(copies[i]->frames);
    std::string why;
    EXPECT_TRUE(contains_in_order(copies[i]->frames,
                                  {{python_frame(script, copy_lines[i], "main")}, {"ffi_call"}, {"cudaMemcpy"}},
                                  &why))
        << "copy " << i << ": " << why;
    EXPECT_EQ(copies[i]->frames.back(), "cudaMemcpy");
  }
  const auto sets = stacks.named("cudaMemset");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(python_frames_of(sets[0]->frames),
            (std::vector<std::string>{
                python_frame(script, module_line, "<module>"),
                python_frame(script, lines_containing(script, "ext.simtensor_zero(").at(0), "main")}))
      << joined(sets[0]->frames);
  // A kernel launch, where the extension was built with nvcc.
  for (const SliceStack* launch : stacks.named("cudaLaunchKernel")) {
    std::string why;
    EXPECT_TRUE(contains_in_order(launch->frames,
                                  {{python_frame(script, lines_containing(script, "ext.simtensor_fill(").at(0), "main")},
                                   {"cudaLaunchKernel"}},
                                  &why))
        << why;
  }
}

// python_chains.py under the launcher, with its oracle.
class PythonChains : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    python_ = interpreter_under_test(&why);
    if (python_.path.empty()) GTEST_SKIP() << why;
    script_ = build_path("PYTHON_CHAINS_PY");
    const std::string expected_path = dir_ / "expected.json";
    // Deep enough to keep every native frame: the test is about where the
    // Python frames go among them (3.9 and 3.10 spend ~6 native frames on
    // each Python call).
    const ProcessResult run = testing::run_process(
        traced(dir_ / "x.trace",
               {python_.path, script_, build_path("SIMTENSOR_EXT"), build_path("PYTHON_CALLBACK_LIB"), expected_path},
               {"--stack-depth", "128"}));
    ASSERT_TRUE(run.exited_with(0)) << run.describe();
    ASSERT_EQ(run.err.find("Python frames"), std::string::npos) << run.err;
    std::ifstream in(expected_path);
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    const auto document = testing::parse_json(text.str(), &error);
    ASSERT_TRUE(document) << error;
    for (const testing::JsonValue& call : document->items) {
      std::vector<std::string> root_first;
      for (const testing::JsonValue& frame : call["frames"].items)
        root_first.insert(root_first.begin(),
                          frame["file"].str() + ":" + frame["line"].text + " " + frame["function"].str());
      expected_.emplace_back(call["site"].str(), root_first);
    }
    ASSERT_EQ(run.out, "python_chains: " + std::to_string(expected_.size()) + " calls\n");
    stacks_ = convert_stacks(dir_ / "x.trace");
    ASSERT_TRUE(stacks_.ok) << stacks_.error;
    memsets_ = stacks_.named("cudaMemset");
  }

  // The memset whose innermost Python frame is `innermost` (exactly one).
  const SliceStack* memset_at(const std::string& innermost) {
    const SliceStack* found = nullptr;
    for (const SliceStack* slice : memsets_) {
      const auto frames = python_frames_of(slice->frames);
      if (frames.empty() || frames.back() != innermost) continue;
      EXPECT_EQ(found, nullptr) << "two memsets at " << innermost;
      found = slice;
    }
    return found;
  }

  std::string site(const std::string& name) { return script_ + ":" + std::to_string(site_line(script_, name)); }

  std::string all_memsets() {
    std::string text;
    for (const SliceStack* slice : memsets_) text += "---\n" + joined(slice->frames) + "\n";
    return text;
  }

  Interpreter python_;
  std::string script_;
  TempDir dir_;
  std::vector<std::pair<std::string, std::vector<std::string>>> expected_;  // site, root-first frames
  ConvertedStacks stacks_;
  std::vector<const SliceStack*> memsets_;
};

// Every memset's Python frames are exactly those the interpreter reports at
// that call: files, functions and lines of the whole chain, in order,
// including the frames of threading.py and asyncio.
TEST_F(PythonChains, EveryCallShowsTheInterpretersOwnStack) {
  ASSERT_EQ(memsets_.size(), expected_.size()) << all_memsets();
  // One call at each expect() of the script.
  ASSERT_EQ(expected_.size(), lines_containing(script_, "expect('").size());
  for (const auto& [site_name, frames] : expected_) {
    ASSERT_FALSE(frames.empty()) << site_name;
    const SliceStack* slice = memset_at(frames.back());
    ASSERT_NE(slice, nullptr) << site_name << ": no memset whose innermost Python frame is " << frames.back()
                              << "\n" << all_memsets();
    EXPECT_EQ(python_frames_of(slice->frames), frames) << site_name << ":\n" << joined(slice->frames);
    // Then the native frames of the call into the extension, the API last.
    EXPECT_LT(index_of(slice->frames, frames.back()), last_index_of(slice->frames, "ffi_call"))
        << site_name << ":\n" << joined(slice->frames);
    EXPECT_EQ(slice->frames.back(), "cudaMemset");
  }
}

// Independent of the oracle: each site's innermost frame is the script's
// line of that call, named as this version names functions.
TEST_F(PythonChains, EachSiteShowsItsLineAndFunction) {
  const std::vector<std::pair<std::string, std::string>> sites = {
      {"module", "<module>"},
      {"init", "Model.__init__"},
      {"method", "Model.forward"},
      {"nested", "main.<locals>.step"},
      {"lambda", "main.<locals>.<lambda>"},
      {"generator", "chunks"},
      {"generator_from_c", "chunks_from_c"},
      {"coroutine", "step_async"},
      {"latin1_name", "größe"},
      {"bmp_name", "计算"},
      {"astral_name", "\xF0\xA0\x80\x80"},  // U+20000: a 4-byte str
      {"callback", "through_c.<locals>.called_back"},
      {"thread", "main.<locals>.<lambda>"},
  };
  for (const auto& [name, qualified] : sites) {
    ASSERT_GT(site_line(script_, name), 0) << name;
    const std::string innermost = site(name) + " " + shown_function(qualified, python_);
    EXPECT_NE(memset_at(innermost), nullptr) << name << ": no memset at " << innermost << "\n" << all_memsets();
  }
  // The caller of a method is the line that called it.
  const SliceStack* method = memset_at(site("method") + " " + shown_function("Model.forward", python_));
  ASSERT_NE(method, nullptr);
  const auto frames = python_frames_of(method->frames);
  ASSERT_GE(frames.size(), 3u);
  EXPECT_EQ(frames[frames.size() - 2], site("main_model") + " main");
  EXPECT_EQ(frames[0], python_frame(script_, lines_containing(script_, "sys.exit(main())").at(0), "<module>"));
}

// `stats --section code` on a Python program: the GPU time of every copy,
// memset and kernel goes to the script's own line (not to ctypes, libffi,
// the extension or the runtime), by line, function and module, with the
// bytes its allocations asked for.
TEST(PythonStacks, CodeViewPutsGpuTimeOnTheScriptsLines) {
  INTERPRETER_OR_SKIP(python);
  const std::string script = build_path("CTYPES_OPS");
  TempDir dir;
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {python.path, script, build_path("SIMTENSOR_EXT")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  auto code_rows = [&](const std::string& by) {
    const ProcessResult stats = run_proftrace({"stats", dir / "x.trace", "--json", "--section", "code", "--by", by});
    EXPECT_TRUE(stats.exited_with(0)) << stats.describe();
    std::string error;
    auto document = testing::parse_json(stats.out, &error);
    EXPECT_TRUE(document.has_value()) << error << stats.out;
    std::vector<testing::JsonValue> rows;
    if (document)
      for (const auto& table : (*document)["tables"].items) rows = table["rows"].items;
    return rows;
  };
  // Every line that makes GPU work, once each (ctypes_ops.py's own calls).
  std::vector<int> work_lines;
  for (const char* call : {"ext.simtensor_upload(", "ext.simtensor_copy(", "ext.simtensor_download(",
                           "ext.simtensor_zero(", "ext.simtensor_fill(a"})
    for (int line : lines_containing(script, call)) work_lines.push_back(line);
  std::sort(work_lines.begin(), work_lines.end());
  ASSERT_EQ(work_lines.size(), 6u) << "upload, copy, two downloads, zero, fill";

  const auto by_line = code_rows("line");
  std::vector<int> seen;
  for (const auto& row : by_line) {
    const std::string name = row["Line"].str();
    if (row["Launches"].as_uint() == 0) continue;  // allocation lines
    EXPECT_EQ(row["Launches"].as_uint(), 1u) << name;
    EXPECT_GT(row["GPU Time (ns)"].as_uint(), 0u) << name;
    const std::string prefix = script + ":";
    ASSERT_EQ(name.rfind(prefix, 0), 0u) << "attributed to " << name << ", not to the script";
    EXPECT_EQ(name.substr(name.size() - 5), " main") << name;
    seen.push_back(std::stoi(name.substr(prefix.size())));
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, work_lines);
  // The two simtensor_empty calls allocate nbytes each (4096 floats).
  uint64_t allocated = 0;
  for (const auto& row : by_line) allocated += row["Bytes Allocated"].as_uint();
  EXPECT_EQ(allocated, 2u * 4096u * 4u);

  const auto by_function = code_rows("function");
  ASSERT_EQ(by_function.size(), 1u);
  EXPECT_EQ(by_function[0]["Function"].str(), script + " " + shown_function("main", python));
  EXPECT_EQ(by_function[0]["Launches"].as_uint(), 6u);
  EXPECT_EQ(by_function[0]["Allocations"].as_uint(), 2u);
  EXPECT_EQ(by_function[0]["Share (%)"].as_double(), 100.0);
  const auto by_module = code_rows("module");
  ASSERT_EQ(by_module.size(), 1u);
  EXPECT_EQ(by_module[0]["Module"].str(), script.substr(0, script.rfind('/')));
}

// A call from C back into Python: two runs of Python frames, each entered
// from C, with the C function between them - where the native stack has it.
// Entry flags that were wrong for this version would put the runs on the
// wrong side of it (or drop it).
TEST_F(PythonChains, ACallbackFromCIsSplitAroundTheNativeFrame) {
  const std::string function = shown_function("through_c.<locals>.called_back", python_);
  const SliceStack* slice = memset_at(site("callback") + " " + function);
  ASSERT_NE(slice, nullptr) << all_memsets();
  const auto& frames = slice->frames;
  const ptrdiff_t outer = index_of(frames, site("call_into_c") + " through_c");
  const ptrdiff_t native = index_of(frames, "stacks_call_back (python_callback_lib.c:");
  const ptrdiff_t inner = index_of(frames, site("callback") + " " + function);
  EXPECT_GE(outer, 0) << joined(frames);
  EXPECT_GT(native, outer) << joined(frames);
  EXPECT_GT(inner, native) << joined(frames);
  EXPECT_GT(last_index_of(frames, "ffi_call"), inner) << joined(frames);
}

}  // namespace
}  // namespace proflaunch::e2e
