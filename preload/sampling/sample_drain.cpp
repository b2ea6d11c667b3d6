// The writer's side of sampling (a writer task): each cycle, every thread's
// sample buffer is drained into CpuSample records under that thread's
// ThreadBatch; the stacks the entries carry are interned through the stack
// catalog (which writes their modules' ModuleDefs first); samples not taken
// become Lost records; CpuSamplingInfo opens each section and follows each
// change of state.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

#include "preload/base/clock.h"
#include "preload/record/definitions.h"
#include "preload/sampling/sampler_internal.h"
#include "preload/sampling/signal_safe_modules.h"
#include "preload/sampling/thread_sampler.h"
#include "preload/stacks/stack_catalog.h"
#include "preload/state/runtime_state.h"
#include "preload/state/sampler_fault.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::sampling {
namespace {

using namespace format;

// Handler hashes to catalog ids. The ids stay valid in a fork child (its
// section writes the whole catalog again), so this is kept there too.
std::unordered_map<uint64_t, uint32_t>* g_native_ids = nullptr;
std::unordered_map<uint64_t, uint32_t>* g_python_ids = nullptr;
uint64_t g_info_section = 0;
uint32_t g_info_changes = 0;

void check_fault_net() {
  const CrashHandler crash_handler = installed_crash_handler();
  if (crash_handler == nullptr) {
    g_sampler.fault_net.store(false, std::memory_order_release);
    return;
  }
  bool ours = true;
  for (int signal_number : {SIGSEGV, SIGBUS}) {
    struct sigaction current {};
    if (sigaction(signal_number, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) == 0 ||
        current.sa_sigaction != crash_handler)
      ours = false;
  }
  g_sampler.fault_net.store(ours, std::memory_order_release);
}

void before_drain() noexcept {
  if (g_sampler.state.load(std::memory_order_acquire) != static_cast<uint8_t>(CpuSamplingState::kOn)) return;
  refresh_code_ranges(/*force=*/false);
  check_fault_net();
}

void write_info(WriterRecordSink& sink) {
  CpuSamplingInfoRecord info{};
  info.header = header_for<CpuSamplingInfoRecord>();
  info.hz = g_sampler.hz;
  const auto state = g_sampler.state.load(std::memory_order_acquire);
  info.state = state;
  info.mechanism = static_cast<uint8_t>(state == static_cast<uint8_t>(CpuSamplingState::kOff)
                                            ? CpuSamplingMechanism::kNone
                                            : CpuSamplingMechanism::kThreadCpuTimer);
  info.signal_number = static_cast<uint8_t>(g_sampler.signal_number);
  info.time_ns = g_sampler.state_since_ns.load(std::memory_order_relaxed);
  sink.append(&info, sizeof info);
}

uint32_t native_id(const SampleEntry& e) {
  if ((e.flags & kHasNative) == 0) return 0;
  if (auto it = g_native_ids->find(e.native_hash); it != g_native_ids->end()) return it->second;
  if ((e.flags & kNativeContent) == 0) return 0;
  const auto* pcs = reinterpret_cast<const uint64_t*>(&e + 1);
  stacks::NativeStack stack;
  stack.count = e.native_count;
  stack.truncated = (e.flags & kNativeTruncated) != 0;
  const uint32_t id = stacks::native_stack_id(pcs, stack);
  if (id != 0) g_native_ids->emplace(e.native_hash, id);
  return id;
}

uint32_t python_id(const SampleEntry& e) {
  if ((e.flags & kHasPython) == 0) return 0;
  if (auto it = g_python_ids->find(e.python_hash); it != g_python_ids->end()) return it->second;
  if ((e.flags & kPythonContent) == 0) return 0;
  const auto* at = reinterpret_cast<const uint8_t*>(&e + 1);
  if (e.flags & kNativeContent) at += e.native_count * 8u;
  stacks::ResolvedPythonFrame frames[kMaxStackDepth];
  uint32_t flags[kMaxStackDepth];
  const uint32_t count = e.python_count < kMaxStackDepth ? e.python_count : kMaxStackDepth;
  for (uint32_t i = 0; i < count; ++i) {
    PythonFrameEntry frame;
    std::memcpy(&frame, at, sizeof frame);
    const auto* text = reinterpret_cast<const char*>(at + sizeof frame);
    frames[i].file.assign(text, frame.file_bytes);
    frames[i].function.assign(text + frame.file_bytes, frame.function_bytes);
    frames[i].line = frame.line;
    flags[i] = frame.flags;
    at += align4(sizeof frame + frame.file_bytes + frame.function_bytes);
  }
  stacks::PythonKeys stack;
  stack.count = count;
  stack.truncated = (e.flags & kPythonTruncated) != 0;
  const uint32_t id = stacks::python_stack_id_of_frames(frames, flags, stack);
  if (id != 0) g_python_ids->emplace(e.python_hash, id);
  return id;
}

void write_lost(WriterRecordSink& sink, ThreadSampler& s, LostReason reason, uint64_t count, uint64_t now) {
  LostRecord lost{};
  lost.header = header_for<LostRecord>();
  lost.reason = static_cast<uint32_t>(reason);
  const uint64_t first = s.first_lost_ns.load(std::memory_order_relaxed);
  lost.first_ns = first != 0 && first <= now ? first : now;
  lost.last_ns = now;
  lost.count = count;
  sink.append_for_thread(s.tid, &lost, sizeof lost);
}

void drain_thread(WriterRecordSink& sink, ThreadSampler& s) {
  const bool exited = s.exited.load(std::memory_order_acquire);
  uint64_t unknown = 0;
  s.buffer.drain([&](const SampleEntry& e) {
    CpuSampleRecord record{};
    record.header = header_for<CpuSampleRecord>();
    record.flags = static_cast<uint16_t>(((e.flags & kLeafIsPc) ? kCpuSampleLeafIsPc : 0) |
                                         ((e.flags & kInTracedCall) ? kCpuSampleInTracedCall : 0));
    record.time_ns = e.time_ns;
    record.thread_cpu_ns = e.thread_cpu_ns;
    record.native_stack = native_id(e);
    record.python_stack = python_id(e);
    record.periods = e.periods;
    if (((e.flags & kHasNative) != 0 && record.native_stack == 0) ||
        ((e.flags & kHasPython) != 0 && record.python_stack == 0)) {
      ++unknown;  // a stack that could not be defined (catalog full): still a sample, with what is known
    }
    sink.append_for_thread(s.tid, &record, sizeof record);
  });
  (void)unknown;
  const uint64_t now = now_ns();
  const uint64_t unsafe = s.lost_unsafe.load(std::memory_order_acquire);
  const uint64_t full = s.lost_full.load(std::memory_order_acquire);
  if (unsafe != s.reported_unsafe) write_lost(sink, s, LostReason::kCpuSampleUnsafe, unsafe - s.reported_unsafe, now);
  if (full != s.reported_full) write_lost(sink, s, LostReason::kCpuSampleBufferFull, full - s.reported_full, now);
  s.reported_unsafe = unsafe;
  s.reported_full = full;
  if (exited && s.buffer.empty()) s.drained_after_exit = true;
}

void run(WriterRecordSink& sink, bool) noexcept {
  try {
    if (g_native_ids == nullptr) {
      g_native_ids = new std::unordered_map<uint64_t, uint32_t>();
      g_python_ids = new std::unordered_map<uint64_t, uint32_t>();
    }
    // CpuSamplingInfo goes before a section's first sample (a process that
    // samples nothing and records nothing leaves no part) and after every
    // change of state.
    const uint64_t section = runtime::section_id();
    const uint32_t changes = g_sampler.state_changes.load(std::memory_order_acquire);
    if (g_info_section == section && changes != g_info_changes) {
      write_info(sink);
      g_info_changes = changes;
    }
    for_each_thread_sampler([&](ThreadSampler& s) {
      if (g_info_section != section && (!s.buffer.empty() || s.lost_unsafe.load() != s.reported_unsafe ||
                                        s.lost_full.load() != s.reported_full)) {
        write_info(sink);
        g_info_section = section;
        g_info_changes = changes;
      }
      drain_thread(sink, s);
    });
  } catch (...) {
    // out of memory in the id maps: the samples stay in their buffers
  }
}

void reset_in_child() noexcept { g_info_section = 0; }

const WriterTask kSampleDrainTask{before_drain, run, reset_in_child};

}  // namespace

void register_sample_drain() noexcept {
  static bool registered = false;
  if (registered) return;
  registered = true;
  writer_register_task(&kSampleDrainTask);
}

}  // namespace proflaunch::sampling
