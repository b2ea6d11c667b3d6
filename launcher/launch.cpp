#include "launcher/launch.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <chrono>
#include <thread>

#include "launcher/control_server.h"
#include "launcher/gpu_metrics/sampler.h"
#include "launcher/join.h"
#include "launcher/output_name.h"
#include "launcher/parts_dir.h"
#include "launcher/preload_list.h"
#include "launcher/shim_locator.h"
#include "launcher/symbol_table.h"
#include "launcher/summary.h"
#include "launcher/traced_child.h"
#include "preload/config.h"

namespace proflaunch::launcher {
namespace {

void say(const std::string& line) { std::fprintf(stderr, "proflaunch: %s\n", line.c_str()); }

bool exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

std::string pid_list(const std::vector<uint32_t>& pids) {
  std::string text;
  for (size_t i = 0; i < pids.size() && i < 8; ++i) text += (i == 0 ? "" : ", ") + std::to_string(pids[i]);
  if (pids.size() > 8) text += ", ...";
  return text;
}

std::string processes(size_t n) { return std::to_string(n) + (n == 1 ? " traced process" : " traced processes"); }

// After the program exits, processes it left behind (daemons, orphans) may
// still write: wait for them, up to `seconds`, or until the user signals the
// launcher. Returns those still running.
std::vector<uint32_t> wait_for_writers(const std::string& parts_dir, const ControlServer& control,
                                       unsigned seconds, bool quiet) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  bool said = false;
  for (;;) {
    std::vector<uint32_t> running = running_writers(parts_dir, control.slot_pids());
    const auto now = Clock::now();
    if (running.empty() || now >= deadline || TracedChild::signalled_after_exit()) return running;
    if (!said && !quiet && now - start >= std::chrono::seconds(1)) {
      say("waiting up to " + std::to_string(seconds) + " s for " + processes(running.size()) +
          " the program left running (pid " + pid_list(running) + "); Ctrl-C joins at once");
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Joins, reports damaged parts, prints the summary. False when the joined
// file could not be written (the parts are then left for --join). The parts
// of `running` processes are still being written: they are copied up to
// their last whole chunk and every part is kept for a later --join.
bool join_and_report(const std::string& parts_dir, const std::string& output, const std::string& shown_name,
                     bool replace, bool quiet, bool symbols, const std::vector<uint32_t>& running,
                     const std::string& device_metrics_note = "") {
  // Under a file size limit (RLIMIT_FSIZE) a joined file bigger than every
  // part would kill the launcher with SIGXFSZ, losing the program's exit
  // status and leaving the temporary file: take EFBIG instead. The program
  // has exited by now, so it does not inherit this.
  signal(SIGXFSZ, SIG_IGN);
  const JoinResult joined = join_parts(parts_dir, output, replace, /*keep_parts=*/!running.empty());
  if (!joined.ok) {
    say(joined.error + "; the parts are in " + parts_dir);
    return false;
  }
  if (symbols) {
    // After the join, while the program's libraries are still here. A
    // failure leaves the trace as it was: it is complete without names.
    const SymbolTableResult table = append_symbol_table(output);
    if (!table.ok && !quiet) say(table.error + " (proftrace will look the names up itself)");
  }
  auto still_writing = [&](const std::string& part) {
    return std::find(running.begin(), running.end(), part_pid(part)) != running.end();
  };
  if (!quiet) {
    for (const PartReport& part : joined.parts)
      if (!part.cut_reason.empty() && !still_writing(part.part))
        say(part.part + ": " + part.cut_reason + ", " + std::to_string(part.bytes_cut) +
            " bytes at offset " + std::to_string(part.cut_offset) + " left out");
    TraceCounts counts;
    std::string error;
    if (count_trace(output, &counts, &error)) {
      say(summary_line(shown_name, counts).substr(sizeof "proflaunch: " - 1));
      // Why a GPU program's trace has no device metrics (a run without a
      // GPU is not told about NVML or ROCm SMI).
      if (!device_metrics_note.empty() && (counts.nvidia_devices > 0 || counts.amd_devices > 0))
        say(device_metrics_note);
    } else {
      say(error);
    }
  }
  // Said even with -q: the trace is not whole yet.
  if (!running.empty())
    say(processes(running.size()) + " still running (pid " + pid_list(running) + "): " + shown_name +
        " holds what they wrote so far, and the parts stay in " + parts_dir + "; `proflaunch --join " +
        shown_name + " --force` once they end writes the whole trace");
  return true;
}

}  // namespace

int run_traced(const LaunchOptions& options) {
  const SettingValues& settings = options.settings;
  const std::string output_pattern = settings.text(Setting::kOutput);
  const bool force = settings.flag(Setting::kForce);
  const bool verbose = settings.flag(Setting::kVerbose);
  const bool quiet = settings.flag(Setting::kQuiet);
  const ShimLocation shim = locate_shim();
  if (shim.path.empty()) {
    say(shim.error);
    return 1;
  }

  TracedChild child;
  std::string error;
  if (!child.start(options.command, &error)) {
    say(error);
    return 1;
  }

  // The parts directory is made exclusively and locked for the whole run:
  // two runs never share one. With %n, a run that loses the race for a name
  // takes the next one.
  NameResult name;
  std::string output, parts_dir;
  PartsLock lock;
  for (int attempt = 0;; ++attempt) {
    name = expand_output_name(output_pattern, child.pid());
    if (!name.error.empty()) {
      child.abandon();
      say(name.error);
      return 2;
    }
    output = absolute_path(name.path);
    parts_dir = parts_directory_for(output);
    if (!force && exists(output)) {
      child.abandon();
      say(name.path + " already exists: use --force to overwrite it, or another -o (e.g. with %n)");
      return 1;
    }
    std::string error;
    const MakeDir made = make_parts_dir(parts_dir, &error);
    if (made == MakeDir::kFailed) {
      child.abandon();
      say(error);
      return 1;
    }
    if (made == MakeDir::kExists && attempt < 100 &&
        absolute_path(expand_output_name(output_pattern, child.pid()).path) != output)
      continue;  // %n: another run took this name since it was expanded
    if (!lock.acquire(parts_dir, &error)) {
      child.abandon();
      say(error + ": use another -o (e.g. with %n)");
      return 1;
    }
    if (made == MakeDir::kExists) {
      if (!force) {
        child.abandon();
        say(parts_dir + " exists (left by an interrupted run?): recover it with proflaunch --join " +
            name.path + ", or pass --force to discard it");
        return 1;
      }
      discard_parts(parts_dir);
    }
    break;
  }

  // proflaunch ctl reaches the job through a page every process maps at
  // start (created before the program runs) and a socket served while it runs.
  ControlServer control;
  std::string control_error;
  const bool has_control = control.create_page(parts_dir, &control_error);

  // A program or shim built with ASan/TSan needs its runtime loaded first.
  const char* path_variable = std::getenv("PATH");
  const char* users_preload = std::getenv("LD_PRELOAD");
  const std::vector<std::string> runtimes = first_only_runtimes(
      shim.path, resolve_program(options.command[0], path_variable != nullptr ? path_variable : ""));
  if (verbose)
    for (const std::string& runtime : runtimes) say("preloading " + runtime + " ahead of the shim: it must load first");
  Environment environment = {
      {"LD_PRELOAD", preload_value(shim.path, users_preload != nullptr ? users_preload : "", runtimes)},
      {kEnvPartsDir, parts_dir},
  };
  // The options the shim reads, each in its row's variable (preload/settings.h).
  for (auto& setting : settings_environment(settings)) environment.push_back(std::move(setting));
  const std::string tsan_options = tsan_options_value(std::getenv("TSAN_OPTIONS"), runtimes);
  if (!tsan_options.empty()) {
    environment.emplace_back("TSAN_OPTIONS", tsan_options);
    if (verbose) say("TSAN_OPTIONS=" + tsan_options + ": the writer thread makes every fork multi-threaded");
  }
  // A real driver loads the library named here inside cuInit and calls its
  // InitializeInjection: CUPTI starts as early as the driver allows. A
  // program (or user) that names its own injection library keeps it.
  const std::string gpu_timing = settings.text(Setting::kGpuTiming);
  if (gpu_timing != "events" && gpu_timing != "none" && std::getenv("CUDA_INJECTION64_PATH") == nullptr)
    environment.emplace_back("CUDA_INJECTION64_PATH", shim.path);
  // Every module that carries NVTX loads the library named here and calls
  // its InitializeInjectionNvtx2 (preload/nvtx). A program (or user) that
  // names its own NVTX tool keeps it, and NVTX is then not recorded.
  // Capture windows opened by NVTX ranges need it whatever --trace says.
  uint32_t domains = 0;
  const bool nvtx_capture =
      settings.text(Setting::kCaptureRange).rfind("nvtx:", 0) == 0 ||
      (settings.given(Setting::kSteps) && settings.text(Setting::kStepRange).rfind("kernel:", 0) != 0);
  if ((parse_trace_domains(settings.text(Setting::kTrace).c_str(), domains) && (domains & kTraceNvtx) != 0) ||
      nvtx_capture) {
    const char* own = std::getenv("NVTX_INJECTION64_PATH");
    if (own == nullptr || *own == '\0') {
      environment.emplace_back("NVTX_INJECTION64_PATH", shim.path);
    } else if (own != shim.path) {
      say(std::string("NVTX_INJECTION64_PATH is already set (") + own + "): NVTX ranges are not recorded" +
          (nvtx_capture ? ", and no NVTX range can open a capture window" : ""));
    }
  }
  // Settings inherited from an outer traced process are not ours.
  const std::vector<std::string> unset = settings_to_unset(environment);

  const int exec_errno = child.release(environment, unset);
  if (exec_errno != 0) {
    control.stop();
    child.wait();
    unlink((parts_dir + "/" + kLockName).c_str());
    rmdir(parts_dir.c_str());
    const std::string& program = options.command[0];
    if (exec_errno == ENOENT) {
      say(program + ": command not found");
      return 127;
    }
    say(program + ": cannot run: " + std::strerror(exec_errno));
    return 126;
  }

  if (has_control) {
    JobInfo job;
    job.output = output;
    for (const std::string& word : options.command) job.command += (job.command.empty() ? "" : " ") + word;
    job.idle = settings.flag(Setting::kIdle);
    job.ring = settings.given(Setting::kRing);
    job.mode = job.idle ? "idle" : job.ring ? "ring " + settings.text(Setting::kRing)
               : (!settings.given(Setting::kCaptureRange) && !settings.given(Setting::kSteps) &&
                  !settings.given(Setting::kDelay) && !settings.given(Setting::kDuration))
                   ? "whole run"
                   : "capture windows";
    if (!control.start(job, &control_error) && (job.idle || verbose))
      say("proflaunch ctl cannot reach this job: " + control_error);
  } else if (settings.flag(Setting::kIdle) || verbose) {
    say("proflaunch ctl cannot reach this job: " + control_error);
  }

  // Device metrics from outside the program (gpu_metrics/README.md).
  gpu_metrics::Sampler device_sampler;
  std::string device_metrics_note;
  uint32_t metrics_hz = 0;  // the shim's parser: the value was checked by it already
  if (parse_rate_hz(settings.text(Setting::kGpuMetrics).c_str(), kMaxGpuMetricsHz, metrics_hz) && metrics_hz > 0) {
    gpu_metrics::SamplerOptions sampler_options;
    sampler_options.hz = metrics_hz;
    sampler_options.parts_dir = parts_dir;
    sampler_options.cuda_visible_devices = std::getenv("CUDA_VISIBLE_DEVICES");
    sampler_options.rocr_visible_devices = std::getenv("ROCR_VISIBLE_DEVICES");
    sampler_options.hip_visible_devices = std::getenv("HIP_VISIBLE_DEVICES");
    sampler_options.verbose = verbose;
    // Said at once (even with -q) when --gpu-metrics was asked for; else
    // after the summary, and only when the program used a GPU.
    const bool asked = settings.given(Setting::kGpuMetrics);
    // Called from the sampler's thread too: the flags by value; the note
    // outlives the thread (stopped before the join).
    sampler_options.say = [asked, verbose, quiet, &device_metrics_note](const std::string& line) {
      if (asked || verbose)
        say(line);
      else if (!quiet)
        device_metrics_note = line;
    };
    device_sampler.start(sampler_options);
  }

  const int status = child.wait();
  const gpu_metrics::SamplerCounts sampled = device_sampler.stop();
  if (verbose && sampled.devices > 0)
    say("device metrics: " + std::to_string(sampled.devices) + " devices, " + std::to_string(sampled.ticks) +
        " readings, " + std::to_string(sampled.samples) + " samples, sampler CPU " +
        std::to_string(sampled.cpu_ns / 1000) + " us");
  const std::vector<uint32_t> running =
      wait_for_writers(parts_dir, control, settings.number(Setting::kWaitAfterExit), quiet);
  control.stop();
  // Said even with -q: it explains an empty trace.
  if (settings.given(Setting::kRing) && !has_parts(parts_dir))
    say("--ring: no process wrote out its flight recorder (no crash, out-of-memory, sticky device error "
        "or `proflaunch ctl dump`); --ring-dump-at-exit keeps the last " + settings.text(Setting::kRing) +
        " at exit");
  join_and_report(parts_dir, output, name.path, force, quiet, !settings.flag(Setting::kNoSymbols), running,
                  device_metrics_note);
  return exit_code_for(status);
}

int run_join(const JoinOptions& options) {
  const std::string output = absolute_path(options.output);
  const std::string parts_dir = parts_directory_for(output);
  struct stat info;
  if (stat(parts_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    say("nothing to join: " + parts_dir + " is not a directory");
    return 1;
  }
  if (!options.force && exists(output)) {
    say(options.output + " already exists: use --force to replace it");
    return 1;
  }
  PartsLock lock;
  std::string error;
  if (!lock.acquire(parts_dir, &error)) {
    say(error + ": its run has not ended");
    return 1;
  }
  return join_and_report(parts_dir, output, options.output, options.force, options.quiet, options.symbols,
                         running_writers(parts_dir))
             ? 0
             : 1;
}

}  // namespace proflaunch::launcher
