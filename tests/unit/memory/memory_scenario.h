// A traced process written with TraceBuilder whose memory calls a test
// chooses, and the memory analysis of it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/trace_builder.h"
#include "tests/unit/memory/memory_events.h"
#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::testing {

constexpr uint64_t kStartNs = 1'000'000'000;  // the section's start: the report's base
constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint32_t kPid = 4242;
constexpr uint32_t kMainTid = 4242;
constexpr uint32_t kWorkerTid = 4243;

class MemoryScenario {
 public:
  explicit MemoryScenario(uint64_t section = kSection, uint32_t pid = kPid) : section_(section) {
    format::ProcessSpec spec;
    spec.pid = pid;
    spec.argv = {"train.py", "--batch", "64"};
    spec.monotonic_ns = kStartNs;
    // On a Kineto base-time boundary: the JSON's ts read as time since the start.
    spec.realtime_ns = kKinetoQuarterWallNs;
    trace_.process(section_, spec);
    malloc_api_ = trace_.api(section_, "cudaMalloc", format::ApiDomain::kRuntime);
    free_api_ = trace_.api(section_, "cudaFree", format::ApiDomain::kRuntime);
    trace_.thread(section_, pid, "python");
    trace_.thread(section_, pid + 1, "pt_worker");
    format::DeviceSpec device;
    device.ordinal = 0;
    device.name = "Test GPU";
    device.total_memory_bytes = 16ull << 30;
    trace_.device(section_, device);
  }

  format::TraceBuilder& builder() { return trace_; }
  uint64_t section() const { return section_; }

  // An allocation at `at_ns` after the section start (end of its call).
  void alloc(uint64_t at_ns, uint64_t address, uint64_t bytes, uint32_t tid = kMainTid, int32_t result = 0) {
    auto r = memory_record(format::AllocationKind::kDevice, format::MemoryAction::kAcquire, kStartNs + at_ns,
                           result == 0 ? address : 0, bytes, 0, result);
    r.span.api = malloc_api_;
    trace_.event(section_, tid, r);
  }
  void free(uint64_t at_ns, uint64_t address, uint32_t tid = kMainTid) {
    auto r = memory_record(format::AllocationKind::kDevice, format::MemoryAction::kRelease, kStartNs + at_ns,
                           address, 0);
    r.span.api = free_api_;
    trace_.event(section_, tid, r);
  }
  // The allocating call before this one gets a memory-point stack of two
  // frames, "train_step (train.cpp:42)" called from "main (train.cpp:7)".
  void stack_of_last(uint64_t correlation_id, uint32_t tid = kMainTid) {
    if (!stack_defined_) define_stack();
    format::CallStackRecord stack{};
    stack.point = static_cast<uint8_t>(format::StackPoint::kMemory);
    stack.correlation_id = correlation_id;
    stack.native_stack = 1;
    trace_.event(section_, tid, stack);
  }
  void record(uint32_t tid, format::MemoryOperationRecord r) {
    r.span.api = malloc_api_;
    trace_.event(section_, tid, r);
  }
  void end(uint64_t at_ns) { trace_.section_end(section_, kStartNs + at_ns, 0, 0); }

 private:
  void define_stack() {
    stack_defined_ = true;
    format::NativeStackDefRecord stack{};
    stack.header = format::header_for<format::NativeStackDefRecord>();
    stack.header.bytes = static_cast<uint16_t>(sizeof stack + 16);
    stack.id = 1;
    stack.frame_count = 2;
    std::vector<uint8_t> bytes(sizeof stack + 16, 0);
    std::memcpy(bytes.data(), &stack, sizeof stack);
    const uint64_t pcs[2] = {0x401000, 0x402000};  // innermost first
    std::memcpy(bytes.data() + sizeof stack, pcs, sizeof pcs);
    trace_.raw_record(section_, format::ChunkKind::kDefinitions, bytes);
    format::SymbolDefRecord symbol{};
    symbol.function_string = trace_.string(section_, "train_step");
    symbol.address = 0x401000;
    symbol.file_string = trace_.string(section_, "train.cpp");
    symbol.line = 42;
    trace_.define(section_, symbol);
    symbol.function_string = trace_.string(section_, "main");
    symbol.address = 0x402000;
    symbol.line = 7;
    trace_.define(section_, symbol);
  }

  format::TraceBuilder trace_;
  uint64_t section_;
  bool stack_defined_ = false;
  uint16_t malloc_api_ = 0;
  uint16_t free_api_ = 0;
};

// Writes the trace(s) and analyzes them as `proftrace memory` does.
inline tools::memory::MemoryReport analyze(const std::vector<std::string>& paths,
                                           tools::memory::AnalysisOptions options = {}) {
  std::vector<tools::InputTrace> inputs;
  std::string error;
  EXPECT_TRUE(tools::open_inputs(paths, &inputs, &error)) << error;
  tools::TraceModel model;
  tools::load_definitions(inputs, model);
  return tools::memory::analyze_memory(inputs, model, options);
}

inline tools::memory::MemoryReport analyze(MemoryScenario& scenario, tools::memory::AnalysisOptions options = {}) {
  return analyze({write_trace(scenario.builder(), "memory.trace")}, options);
}

}  // namespace proflaunch::testing
