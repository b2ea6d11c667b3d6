// Libraries loaded while the program runs: their frames are symbolized (the
// module map follows dlopen through dl_iterate_phdr's counters, and a
// library's ModuleDef comes before any stack in it); a library found by bare
// name through the CALLER's RUNPATH still loads under the shim (its exported
// dlopen is a tail-jumping trampoline, not a C wrapper); RTLD_DEEPBIND draws
// one warning and the program runs on, still traced; a library loaded where
// an unloaded one was is walked with its own unwind rules (the shim's
// dlclose drops what the threads had learned from the old one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <sstream>

#include "formats/reader.h"
#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"

namespace proflaunch::e2e {
namespace {

int occurrences(const std::string& text, const std::string& piece) {
  int n = 0;
  for (size_t at = text.find(piece); at != std::string::npos; at = text.find(piece, at + 1)) ++n;
  return n;
}

TEST(DynamicLoading, ALibraryOpenedAfterStartIsMappedBeforeItsStacks) {
  TempDir dir;
  const std::string library = build_path("STACK_CHAIN_LIB");
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STACK_CHAINS"), "--library", library}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();

  // In file order: the library's ModuleDef, then the first stack that has an
  // address inside it.
  class Order : public format::RecordVisitor {
   public:
    void on_record(const format::RecordView& record) override {
      ++index;
      if (record.record_kind() == format::RecordKind::kStringDef)
        strings[record.as<format::StringDefRecord>().id] = std::string(record.tail<format::StringDefRecord>());
      if (record.record_kind() == format::RecordKind::kModuleDef) {
        const auto module = record.as<format::ModuleDefRecord>();
        if (strings[module.path_string].find("libstack_chain_lib.so") != std::string::npos && module_at == 0) {
          module_at = index;
          start = module.start;
          end = module.end;
        }
      }
      if (record.record_kind() == format::RecordKind::kNativeStackDef && stack_at == 0 && end != 0) {
        const auto def = record.as<format::NativeStackDefRecord>();
        for (uint16_t i = 0; i < def.frame_count; ++i) {
          uint64_t address;
          std::memcpy(&address, record.data + sizeof def + i * 8u, sizeof address);
          if (address >= start && address < end) stack_at = index;
        }
      }
    }
    std::map<uint32_t, std::string> strings;
    uint64_t index = 0, module_at = 0, stack_at = 0, start = 0, end = 0;
  };
  std::string error;
  auto reader = format::TraceReader::open_file(dir / "x.trace", &error);
  ASSERT_TRUE(reader) << error;
  Order order;
  reader->read(order);
  ASSERT_NE(order.module_at, 0u) << "no ModuleDef for the dlopen'ed library";
  ASSERT_NE(order.stack_at, 0u) << "no stack inside the library";
  EXPECT_LT(order.module_at, order.stack_at);

  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  std::string why;
  EXPECT_TRUE(contains_in_order(stacks.named("cudaMemcpy").at(0)->frames,
                                {{"chain_copy", native_line(build_path("STACK_CHAIN_LIB_SOURCE"), "chain_copy_call")}},
                                &why))
      << why;
}

TEST(DynamicLoading, ALibraryFoundThroughTheCallersRunpathStillLoads) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's dlopen interceptor makes itself the caller: even untraced, the
  // program's RUNPATH is not searched ("cannot open shared object file").
  GTEST_SKIP() << "ASan build: dlopen by the caller's RUNPATH fails without the profiler too";
#endif
  TempDir dir;
  const std::vector<std::string> program = {build_path("STACK_CHAINS"), "--library", build_path("STACK_CHAIN_LIB"),
                                            "--runpath-library", "libstack_runpath_target.so"};
  // The program finds it without the profiler (the test is sound) ...
  const ProcessResult plain = testing::run_process(untraced(program));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  // ... and with it.
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(run.out.find("stack_chains: runpath library loaded"), std::string::npos) << run.out;

  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  const auto sets = stacks.named("cudaMemset");
  ASSERT_EQ(sets.size(), 2u);
  std::string why;
  EXPECT_TRUE(contains_in_order(sets.back()->frames, {{"main"}, {"runpath_target_zero"}}, &why)) << why;
}

TEST(DynamicLoading, DeepbindWarnsOnceAndTheProgramIsStillTraced) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan build: ASan refuses RTLD_DEEPBIND (\"incompatible with sanitizer runtime\")";
#endif
  TempDir dir;
  const std::vector<std::string> program = {build_path("STACK_CHAINS"), "--library", build_path("STACK_CHAIN_LIB"),
                                            "--repeat", "3", "--deepbind"};
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(occurrences(run.err, "RTLD_DEEPBIND"), 1) << run.err;
  EXPECT_NE(run.out.find("stack_chains: ok (3 repeats)"), std::string::npos);

  // The library's own runtime calls bind past the shim's runtime hooks, but
  // the runtime reaches the driver through the shim: every copy is recorded,
  // with the library's frames in its stack.
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u);
  EXPECT_EQ(trace.images.front().copies().size(), 3u) << describe(trace);
  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  int copies_with_library_frames = 0;
  for (const SliceStack& slice : stacks.slices) {
    std::string why;
    if (contains_in_order(slice.frames, {{"level_two"}, {"copy_in_static_function"}}, &why))
      ++copies_with_library_frames;
  }
  EXPECT_EQ(copies_with_library_frames, 3);

  // Without RTLD_DEEPBIND, no warning.
  const ProcessResult quiet = testing::run_process(
      traced(dir / "y.trace", {build_path("STACK_CHAINS"), "--library", build_path("STACK_CHAIN_LIB")}));
  ASSERT_TRUE(quiet.exited_with(0)) << quiet.describe();
  EXPECT_EQ(quiet.err.find("RTLD_DEEPBIND"), std::string::npos) << quiet.err;
}

TEST(DynamicLoading, ALibraryLoadedWhereAnUnloadedOneWasIsWalkedWithItsOwnRules) {
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STACK_CHAINS"), "--library", build_path("STACK_CHAIN_LIB"), "--swap",
                               build_path("STACK_SWAP_SMALL"), build_path("STACK_SWAP_LARGE")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const size_t at = run.out.find("swap_call at ");
  ASSERT_NE(at, std::string::npos) << run.out;
  std::string first, second;
  {
    std::istringstream line(run.out.substr(at + 13));
    std::string then;
    line >> first >> then >> then >> second;
  }
  if (first.empty() || first != second)
    GTEST_SKIP() << "the second library was mapped elsewhere (" << run.out << "): nothing to check";

  const ConvertedStacks stacks = convert_stacks(dir / "x.trace");
  ASSERT_TRUE(stacks.ok) << stacks.error;
  int through_swap = 0;
  for (const SliceStack* slice : stacks.named("cudaMemset")) {
    const auto swap = std::find_if(slice->frames.begin(), slice->frames.end(),
                                   [](const std::string& f) { return f.find("swap_call") != std::string::npos; });
    if (swap == slice->frames.end()) continue;
    ++through_swap;
    // Root first: memset_through called swap_call, which called
    // swap_callback. Read with the first library's rules, the second's frame
    // would show a decoy frame between memset_through and swap_call.
    ASSERT_NE(swap, slice->frames.begin()) << joined(slice->frames);
    EXPECT_NE(std::prev(swap)->find("memset_through"), std::string::npos) << joined(slice->frames);
    EXPECT_NE(std::next(swap)->find("swap_callback"), std::string::npos) << joined(slice->frames);
    for (const std::string& frame : slice->frames) EXPECT_EQ(frame.find("decoy"), std::string::npos) << joined(slice->frames);
  }
  EXPECT_EQ(through_swap, 2);
}

TEST(DynamicLoading, LibunwindIsLoadedButStaysOutOfTheGlobalScope) {
  TempDir dir;
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", {build_path("SCOPE_PROBE")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  // In an ASan build ASan's own backtrace interceptor comes first in the
  // global scope, ahead of libc's: what matters is that libunwind's is not.
#if defined(__SANITIZE_ADDRESS__)
  const char* const backtrace_owner = "libasan.so.8";
#else
  const char* const backtrace_owner = "libc.so.6";
#endif
  EXPECT_EQ(run.out, std::string("libunwind loaded: yes\n"
                                 "unw_backtrace from: none\n"
                                 "backtrace from: ") + backtrace_owner + "\n");
}

}  // namespace
}  // namespace proflaunch::e2e
