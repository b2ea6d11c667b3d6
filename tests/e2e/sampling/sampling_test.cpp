// CPU sampling end to end: the real launcher and shim on small programs,
// then the trace read back with the format's reader (and proftrace for what
// users see). What is checked:
//  - the rate: per thread, the sampling periods the samples stand for times
//    the period equal the thread's own CPU time within 10 % (two threads busy
//    for different CPU times), and a blocked thread has no sample;
//  - samples carry the native frames of the busy function and, under
//    PYTHON_UNDER_TEST (every CPython the build finds), the Python frames of
//    the busy Python function;
//  - programs that use signals and timers (a SIGALRM loop, faulthandler's
//    dump_traceback_later, a program with its own handler on the sampling
//    signal) print the same and exit the same with sampling on; the last one
//    makes the sampler step back (CpuSamplingInfo says so);
//  - thread churn, fork, exec, vfork and SIGKILL with sampling on: no hang,
//    every process's samples in the file, losses counted.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "formats/reader.h"
#include "formats/records.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

#define SKIP_IF_SANITIZED() \
  if (sanitized_run()) GTEST_SKIP() << "sanitized programs are not sampled (sanitized_run)"


using namespace format;

struct ThreadSamples {
  uint64_t samples = 0;
  uint64_t periods = 0;
  uint64_t max_cpu_ns = 0;
  std::set<uint32_t> native_stacks;
  std::set<uint32_t> python_stacks;
};

struct SectionSamples {
  uint32_t pid = 0;
  uint32_t flags = 0;
  std::map<uint32_t, ThreadSamples> threads;
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, std::vector<std::string>> python_stacks;  // "file:function"
  std::map<uint32_t, uint32_t> native_frames;                 // id -> frame count
  std::vector<CpuSamplingInfoRecord> infos;
  uint64_t lost_samples = 0;
  uint64_t samples() const {
    uint64_t n = 0;
    for (const auto& [tid, t] : threads) n += t.samples;
    return n;
  }
};

class Collector : public RecordVisitor {
 public:
  std::map<uint64_t, SectionSamples> sections;
  std::vector<std::pair<uint64_t, std::vector<PythonFrame>>> pending_python;

  void on_record(const RecordView& r) override {
    SectionSamples& s = sections[r.section_id];
    switch (r.record_kind()) {
      case RecordKind::kProcessInfo: {
        const auto p = r.as<ProcessInfoRecord>();
        s.pid = p.pid;
        s.flags = p.flags;
        break;
      }
      case RecordKind::kStringDef: {
        const auto d = r.as<StringDefRecord>();
        s.strings[d.id] = std::string(reinterpret_cast<const char*>(r.data) + sizeof d, r.bytes - sizeof d);
        break;
      }
      case RecordKind::kNativeStackDef: {
        const auto d = r.as<NativeStackDefRecord>();
        s.native_frames[d.id] = d.frame_count;
        break;
      }
      case RecordKind::kPythonStackDef: {
        const auto d = r.as<PythonStackDefRecord>();
        std::vector<std::string> frames;
        for (uint32_t i = 0; i < d.frame_count && sizeof d + (i + 1) * sizeof(PythonFrame) <= r.bytes; ++i) {
          PythonFrame f;
          std::memcpy(&f, r.data + sizeof d + i * sizeof f, sizeof f);
          frames.push_back(s.strings[f.file_string] + ":" + s.strings[f.function_string]);
        }
        s.python_stacks[d.id] = frames;
        break;
      }
      case RecordKind::kCpuSample: {
        const auto c = r.as<CpuSampleRecord>();
        ThreadSamples& t = s.threads[r.tid];
        ++t.samples;
        t.periods += c.periods;
        t.max_cpu_ns = std::max<uint64_t>(t.max_cpu_ns, c.thread_cpu_ns);
        if (c.native_stack) t.native_stacks.insert(c.native_stack);
        if (c.python_stack) t.python_stacks.insert(c.python_stack);
        break;
      }
      case RecordKind::kCpuSamplingInfo: s.infos.push_back(r.as<CpuSamplingInfoRecord>()); break;
      case RecordKind::kLost: {
        const auto l = r.as<LostRecord>();
        if (l.reason == static_cast<uint32_t>(LostReason::kCpuSampleUnsafe) ||
            l.reason == static_cast<uint32_t>(LostReason::kCpuSampleBufferFull))
          s.lost_samples += l.count;
        break;
      }
      default: break;
    }
  }
};

Collector read_samples(const std::string& path) {
  Collector collector;
  std::string error;
  auto reader = TraceReader::open_file(path, &error);
  EXPECT_NE(reader, nullptr) << error;
  if (reader) reader->read(collector);
  return collector;
}

std::string program(const char* name) { return build_path(name); }

struct Printed {
  uint32_t tid;
  uint64_t cpu_ns;
};

std::map<std::string, Printed> parse_threads(const std::string& out) {
  std::map<std::string, Printed> result;
  std::regex line(R"(tid (\d+) cpu_ns (\d+) (\w+))");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it)
    result[(*it)[3]] = Printed{static_cast<uint32_t>(std::stoul((*it)[1])), std::stoull((*it)[2])};
  return result;
}

TEST(CpuSampling, RateFollowsEachThreadsCpuTimeAndBlockedThreadsGetNone) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string trace = dir.path() + "/rate.trace";
  const ProcessResult run = run_process(traced(trace, {program("SAMPLING_CPU_THREADS")}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const auto printed = parse_threads(run.out);
  ASSERT_EQ(printed.size(), 3u) << run.out;
  const Collector c = read_samples(trace);
  ASSERT_EQ(c.sections.size(), 1u);
  const SectionSamples& s = c.sections.begin()->second;
  ASSERT_FALSE(s.infos.empty());
  EXPECT_EQ(s.infos.front().state, static_cast<uint8_t>(CpuSamplingState::kOn));
  EXPECT_EQ(s.infos.front().hz, 1000u);
  const uint64_t period_ns = 1000000000ull / s.infos.front().hz;
  for (const char* role : {"long", "short"}) {
    const Printed& p = printed.at(role);
    ASSERT_TRUE(s.threads.count(p.tid)) << role << " thread has no samples";
    const ThreadSamples& t = s.threads.at(p.tid);
    const double sampled_ns = static_cast<double>(t.periods) * period_ns;
    EXPECT_NEAR(sampled_ns, static_cast<double>(p.cpu_ns), 0.10 * p.cpu_ns)
        << role << ": " << t.samples << " samples, " << t.periods << " periods for " << p.cpu_ns << " ns of CPU";
    EXPECT_LE(t.max_cpu_ns, p.cpu_ns) << "a sample dated after the thread's last CPU time";
    EXPECT_FALSE(t.native_stacks.empty());
  }
  EXPECT_EQ(s.threads.count(printed.at("blocked").tid), 0u) << "the sleeping thread was sampled";
  EXPECT_EQ(s.lost_samples, 0u);
  // proftrace says so.
  const ProcessResult info = run_proftrace({"info", trace});
  EXPECT_NE(info.out.find("CPU samples: "), std::string::npos) << info.out;
  const ProcessResult dump = run_proftrace({"dump", trace});
  EXPECT_NE(dump.out.find("CpuSample "), std::string::npos);
  EXPECT_NE(dump.out.find("CpuSamplingInfo "), std::string::npos);
}

TEST(CpuSampling, OffWritesNoSample) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string trace = dir.path() + "/off.trace";
  const ProcessResult run = run_process(traced(trace, {program("SAMPLING_CPU_THREADS"), "0.3"}, {"--cpu-sampling=off"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const Collector c = read_samples(trace);
  for (const auto& [id, s] : c.sections) EXPECT_EQ(s.samples(), 0u);
}

TEST(CpuSampling, PythonFramesInSamples) {
  SKIP_IF_SANITIZED();
  const char* python = std::getenv("PYTHON_UNDER_TEST");
  if (python == nullptr || access(python, X_OK) != 0) GTEST_SKIP() << "no PYTHON_UNDER_TEST";
  TempDir dir;
  const std::string trace = dir.path() + "/py.trace";
  const std::string script = build_path("SAMPLING_PROGRAMS") + "/python_burn.py";
  const ProcessResult run = run_process(traced(trace, {python, script}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const Collector c = read_samples(trace);
  ASSERT_EQ(c.sections.size(), 1u);
  const SectionSamples& s = c.sections.begin()->second;
  // Both threads were sampled inside burn_python (and mostly inside inner_work).
  int threads_in_burn = 0;
  for (const auto& [tid, t] : s.threads) {
    bool in_burn = false;
    for (uint32_t id : t.python_stacks) {
      ASSERT_TRUE(s.python_stacks.count(id)) << "sample names undefined Python stack " << id;
      for (const std::string& frame : s.python_stacks.at(id))
        if (frame == script + ":burn_python") in_burn = true;
    }
    threads_in_burn += in_burn;
  }
  EXPECT_EQ(threads_in_burn, 2) << "expected the main thread and the burner thread in burn_python";
  bool inner = false;
  for (const auto& [id, frames] : s.python_stacks)
    if (!frames.empty() && frames.front() == script + ":inner_work") inner = true;
  EXPECT_TRUE(inner) << "no sample with inner_work as the innermost Python frame";
}

// Addresses differ from run to run (faulthandler prints thread ids).
std::string without_addresses(const std::string& text) {
  return std::regex_replace(text, std::regex("0x[0-9a-fA-F]+"), "0x?");
}

// The same stdout and exit status untraced and traced with sampling on.
void expect_same_behaviour(const std::vector<std::string>& argv, Collector* collected = nullptr) {
  const ProcessResult plain = run_process(untraced(argv));
  TempDir dir;
  const std::string trace = dir.path() + "/same.trace";
  const ProcessResult traced_run = run_process(traced(trace, argv, {"--cpu-sampling=1000"}));
  EXPECT_FALSE(traced_run.timed_out) << traced_run.describe();
  EXPECT_EQ(without_addresses(traced_run.out), without_addresses(plain.out)) << traced_run.describe();
  EXPECT_EQ(traced_run.status, plain.status) << traced_run.describe() << "\nuntraced:\n" << plain.describe();
  if (collected != nullptr) *collected = read_samples(trace);
}

TEST(CpuSampling, SigalrmLoopBehavesAsUntraced) {
  SKIP_IF_SANITIZED();
  Collector c;
  expect_same_behaviour({build_path("PYTHON3"), build_path("SAMPLING_PROGRAMS") + "/alarm_loop.py"}, &c);
  uint64_t samples = 0;
  for (const auto& [id, s] : c.sections) samples += s.samples();
  EXPECT_GT(samples, 0u) << "sampling was not on";
}

TEST(CpuSampling, FaulthandlerDumpLaterBehavesAsUntraced) {
  SKIP_IF_SANITIZED();
  // The dumped traceback names the script's lines: the same text traced.
  expect_same_behaviour({build_path("PYTHON3"), build_path("SAMPLING_PROGRAMS") + "/faulthandler_later.py"});
}

TEST(CpuSampling, ProgramHandlerOnTheSignalMakesSamplingStepBack) {
  SKIP_IF_SANITIZED();
  for (const char* how : {"sigaction", "signal"}) {
    Collector c;
    expect_same_behaviour({program("SAMPLING_RT_HANDLER"), how}, &c);
    bool stepped_back = false;
    for (const auto& [id, s] : c.sections)
      for (const auto& info : s.infos)
        stepped_back |= info.state == static_cast<uint8_t>(CpuSamplingState::kSteppedBack);
    EXPECT_TRUE(stepped_back) << how;
  }
}

TEST(CpuSampling, ThreadChurnForkExecAndVfork) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string trace = dir.path() + "/churn.trace";
  const std::string churn = program("SAMPLING_CHURN");
  const ProcessResult run = run_process(traced(trace, {churn}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(run.out.find("exec'd child done"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("threads 40, child status 0, vfork child status 0"), std::string::npos) << run.out;
  const Collector c = read_samples(trace);
  size_t parent_threads = 0, forked = 0, after_exec = 0;
  for (const auto& [id, s] : c.sections) {
    if (s.flags & kProcessAfterExec) after_exec += s.samples() > 0;
    else if (s.flags & kProcessForked) forked += s.samples() > 0;
    else if (s.samples() > 0) parent_threads = s.threads.size();
    for (const auto& [tid, t] : s.threads)
      for (uint32_t id : t.native_stacks) EXPECT_TRUE(s.native_frames.count(id)) << "undefined native stack";
  }
  EXPECT_GE(parent_threads, 20u) << "short threads were not sampled";
  EXPECT_EQ(forked, 1u) << "the fork child (before its exec) has no samples";
  EXPECT_EQ(after_exec, 1u) << "the exec'd image has no samples";
}

TEST(CpuSampling, SigkillKeepsWhatWasFlushed) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string trace = dir.path() + "/killed.trace";
  const std::string pid_file = dir.path() + "/pid";
  RunningProcess process(traced(trace, {program("SAMPLING_CHURN"), "spin", pid_file}, {"--flush-interval=20"}));
  ASSERT_TRUE(process.wait_for_line("spinning", 20000));
  usleep(600000);
  std::ifstream in(pid_file);
  pid_t program_pid = 0;
  in >> program_pid;
  ASSERT_GT(program_pid, 0);
  kill(program_pid, SIGKILL);
  const ProcessResult result = process.wait();
  const Collector c = read_samples(trace);
  uint64_t samples = 0;
  for (const auto& [id, s] : c.sections) samples += s.samples();
  EXPECT_GT(samples, 0u) << result.describe();
}

}  // namespace
}  // namespace proflaunch::e2e
