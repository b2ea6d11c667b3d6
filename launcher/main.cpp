// proflaunch: runs a program with libproflaunch.so injected and joins what
// its processes recorded into one trace file.
//
//   proflaunch [options] -- program [args...]
//   proflaunch --join OUT
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "launcher/ctl.h"
#include "launcher/launch.h"
#include "preload/config.h"

namespace {

constexpr const char* kDescription =
    "proflaunch [options] -- program [args...]\n\n"
    "Record what a program does on its GPUs, with no change to the program.\n"
    "Every process it starts is traced; the trace goes to one file.\n\n"
    "Examples:\n"
    "  proflaunch -o run.trace -- python train.py\n"
    "  proflaunch -o 'rank%q{RANK}.trace' -- python train.py   (one file per rank)\n"
    "  proflaunch --join run.trace   (after the launcher was killed)\n";

std::string check_trace_domains(const std::string& value) {
  uint32_t domains = 0;
  if (proflaunch::parse_trace_domains(value.c_str(), domains)) return "";
  return "expected a comma list of cuda, memory, nccl, nvtx (or all), got '" + value + "'";
}

std::string check_stacks(const std::string& value) {
  uint32_t points = 0;
  if (proflaunch::parse_stack_points(value.c_str(), points)) return "";
  return "expected none, all, or a comma list of launch, memory, sync, got '" + value + "'";
}

std::string check_counted(const std::string& value) {
  if (proflaunch::parse_counted_calls(value.c_str(), nullptr, nullptr)) return "";
  return "expected default, none, or a comma list of API names, each optionally prefixed with -, got '" + value +
         "'";
}

std::string check_buffer_size(const std::string& value) {
  size_t bytes = 0;
  if (!proflaunch::parse_byte_size(value.c_str(), bytes))
    return "expected a size such as 8M or 512K, got '" + value + "'";
  if (bytes < proflaunch::kMinBufferBytes || bytes > proflaunch::kMaxBufferBytes)
    return "must be between 64K and 1G";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // proflaunch ctl ...: talk to running jobs (launcher/ctl.h).
  if (argc > 1 && std::string(argv[1]) == "ctl") return proflaunch::launcher::ctl_main(argc - 1, argv + 1);
  proflaunch::launcher::LaunchOptions launch;
  std::string join_output;

  CLI::App app(kDescription, "proflaunch");
  app.set_version_flag("--version", std::string("proflaunch ") + PROFLAUNCH_VERSION);
  app.prefix_command();  // the first non-option starts the program's command line
  app.add_option("-o,--output", launch.output_pattern,
                 "trace file; %p pid of the program, %h host, %q{VAR} an environment "
                 "variable, %n a counter that makes the name unique, %% a percent sign")
      ->capture_default_str();
  app.add_flag("--force", launch.force, "overwrite an existing trace (or stale parts)");
  app.add_option("--gpu-timing", launch.gpu_timing,
                 "how GPU work is timed: cupti (the vendor's activity records), events (driver events "
                 "around each operation), none, or auto (CUPTI when it can be used, otherwise events)")
      ->check(CLI::IsMember({"auto", "cupti", "events", "none"}))
      ->capture_default_str();
  app.add_option("--trace", launch.trace_domains, "what to record: cuda,memory,nccl,nvtx or all")
      ->check(check_trace_domains)
      ->capture_default_str();
  app.add_option("--buffer-size", launch.buffer_size,
                 "record buffer per thread (default 8M); records beyond it are counted as dropped")
      ->check(check_buffer_size);
  app.add_option("--flush-interval", launch.flush_interval_ms,
                 "milliseconds between flushes to disk (default 100, at most 200): what a "
                 "SIGKILL can lose")
      ->check(CLI::Range(1u, 200u));
  app.add_option("--stacks", launch.stacks,
                 "where to record call stacks (native and Python): none, all (default), or a "
                 "comma list of launch (kernels, copies, memsets), memory, sync")
      ->check(check_stacks);
  app.add_option("--count-calls", launch.counted_calls,
                 "calls counted per thread rather than recorded one by one (recorded anyway when "
                 "they fail): default (trivial getters such as cuCtxGetCurrent, cudaGetLastError), "
                 "none (no API is counted for its own sake), or a comma list applied in order, "
                 "e.g. default,-cudaEventQuery,cudaStreamQuery. The driver calls a runtime call "
                 "makes on its behalf are always counted, as part of that call")
      ->check(check_counted);
  app.add_option("--stack-depth", launch.stack_depth, "frames kept per call stack (default 32)")
      ->check(CLI::Range(1u, proflaunch::kMaxStackDepth));
  bool no_symbols = false;
  app.add_flag("--no-symbols", no_symbols,
               "do not append the symbol table at the end (proftrace then looks names up in "
               "the program's files, which must still be there)");
  auto* capture = app.add_option_group("Capture windows", "record only part of the run (default: all of it)");
  capture->add_option("--capture-range", launch.capture_range,
                      "record only between cudaProfilerStart and cudaProfilerStop (cudaProfilerApi), or "
                      "inside each occurrence of an NVTX range (nvtx:NAME or nvtx:NAME@DOMAIN)");
  capture->add_option("--capture-range-repeat", launch.capture_range_repeat,
                      "how many such windows to record (default 1; 0: every one)");
  capture->add_option("--delay", launch.delay,
                      "record nothing for this long after the program starts (e.g. 30s, 500ms, 2m)");
  capture->add_option("--duration", launch.duration,
                      "close each window after this long (alone: record from the start, or from --delay, "
                      "for this long)");
  capture->add_option("--steps", launch.steps,
                      "WAIT:WARMUP:ACTIVE[:REPEAT]: record the ACTIVE steps of each cycle, as "
                      "torch.profiler.schedule (REPEAT 0 or absent: every cycle). E.g. --steps=100:0:6:1 "
                      "records steps 100-105");
  capture->add_option("--step-range", launch.step_range,
                      "what one step is: an NVTX range NAME[@DOMAIN] (each occurrence), or kernel:NAME "
                      "(from one launch of the kernel to the next)");
  capture->add_flag("--idle", launch.idle,
                    "start with recording off: record only between `proflaunch ctl start` and `stop` "
                    "(or for `ctl start --duration`)");
  auto* ring = app.add_option_group("Flight recorder", "keep only the end of the run, written out when it matters");
  ring->add_option("--ring", launch.ring,
                   "record all along but keep only the last DURATION (e.g. 30s) in memory; it is written to "
                   "the trace on a crash signal, the first out-of-memory, a sticky device error, "
                   "`proflaunch ctl dump`, or at exit with --ring-dump-at-exit");
  ring->add_option("--ring-size", launch.ring_size,
                   "at most this much compressed data kept per process (default 256M; at least 4M); "
                   "the bound wins over DURATION");
  ring->add_flag("--ring-dump-at-exit", launch.ring_dump_at_exit,
                 "also write out what the ring holds when each process exits or execs");
  app.add_option("--wait-after-exit", launch.wait_after_exit_s,
                 "when the program exits, wait up to this many seconds for the traced processes it left "
                 "running (daemons, orphans) before joining; those still running then are joined as far as "
                 "they got, and their parts kept for a later --join")
      ->check(CLI::Range(0u, 86400u))
      ->capture_default_str();
  app.add_flag("-v,--verbose", launch.verbose, "one line per traced process on stderr");
  app.add_flag("-q,--quiet", launch.quiet, "no summary line at the end");
  app.add_option("--join", join_output,
                 "assemble OUT from the parts in OUT.parts/ left by an interrupted run");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  launch.symbols = !no_symbols;
  launch.command = app.remaining();
  if (!launch.command.empty() && launch.command.front() == "--")
    launch.command.erase(launch.command.begin());

  if (!join_output.empty()) {
    if (!launch.command.empty()) {
      std::fprintf(stderr, "proflaunch: --join takes no program to run\n");
      return 2;
    }
    return proflaunch::launcher::run_join({join_output, launch.force, launch.quiet, launch.symbols});
  }
  {
    proflaunch::CaptureOptions capture_options;
    auto given = [](const std::string& text) { return text.empty() ? nullptr : text.c_str(); };
    capture_options.capture_range = given(launch.capture_range);
    capture_options.capture_range_repeat = given(launch.capture_range_repeat);
    capture_options.delay = given(launch.delay);
    capture_options.duration = given(launch.duration);
    capture_options.steps = given(launch.steps);
    capture_options.step_range = given(launch.step_range);
    capture_options.idle = launch.idle;
    capture_options.ring = given(launch.ring);
    capture_options.ring_size = given(launch.ring_size);
    capture_options.ring_dump_at_exit = launch.ring_dump_at_exit;
    proflaunch::CaptureSpec spec;
    char error[400];
    if (!proflaunch::parse_capture_options(capture_options, spec, error, sizeof error)) {
      std::fprintf(stderr, "proflaunch: %s\n", error);
      return 2;
    }
  }
  if (launch.command.empty()) {
    std::fprintf(stderr, "proflaunch: no program given\nusage: proflaunch [options] -- program "
                         "[args...]   (proflaunch --help for the options)\n");
    return 2;
  }
  return proflaunch::launcher::run_traced(launch);
}
