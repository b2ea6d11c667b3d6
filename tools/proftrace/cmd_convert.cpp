// proftrace convert FILE... -o OUT.json
#include <CLI/CLI.hpp>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <memory>

#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/commands.h"
#include "tools/proftrace/emit/json_emitter.h"
#include "tools/proftrace/emit/protobuf_emitter.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/timeline/converter.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

namespace {

// The processors this process may run on.
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<unsigned>(online) : 1;
}

// Traces hold about 10 bytes per event record: beyond this the JSON would
// pass ~500 MB, which the UI struggles to load.
constexpr uint64_t kProtobufDefaultInputBytes = 20'000'000;  // ~2 M events

void print_summary(const ConvertCommand& command, const timeline::ConvertResult& result,
                   const std::vector<std::string>& symbol_problems, const TraceModel& model, std::FILE* err) {
  const auto& join = result.join;
  if (join.activities_before_first_call > 0)
    std::fprintf(err,
                 "proftrace: note: %" PRIu64
                 " GPU operations were launched before the first call their process has in the trace (a "
                 "flight recorder keeps only the end of the run); they are shown as \"launched before the "
                 "recorded window\"\n",
                 join.activities_before_first_call);
  if (join.activities_without_operation > join.activities_before_first_call)
    std::fprintf(err,
                 "proftrace: warning: %" PRIu64
                 " GPU operations could not be joined to the call that issued it (the call is not "
                 "in the trace, or arrived more than --join-window=%zu records away); they are "
                 "shown without a flow arrow\n",
                 join.activities_without_operation - join.activities_before_first_call, command.join_window);
  if (join.evicted_by_window > 0 && join.activities_without_operation > 0)
    std::fprintf(err, "proftrace: note: %" PRIu64 " entries left the join window unmatched; a larger --join-window may join them\n",
                 join.evicted_by_window);
  for (const std::string& problem : symbol_problems)
    std::fprintf(err, "proftrace: note: call stacks: %s; its frames are shown as file+offset\n",
                 problem.c_str());
  if (result.slices.unattributed_slices > 0)
    std::fprintf(err,
                 "proftrace: note: %" PRIu64 " GPU operations were launched by a path the hooks do not see; "
                 "they are shown as \"unattributed\" slices on their streams\n",
                 result.slices.unattributed_slices);
  if (const std::string covered = describe_windows(result.windows); !covered.empty())
    std::fprintf(err, "proftrace: the trace covers %s\n", covered.c_str());
  if (result.slices.lost_records > 0)
    std::fprintf(err, "proftrace: warning: %" PRIu64 " records were lost while tracing (shown as LOST markers)\n",
                 result.slices.lost_records);
  for (const auto& [id, section] : model.sections()) {
    if (section.process && !section.complete())
      std::fprintf(err,
                   "proftrace: note: pid %u (%s) did not finish tracing (no SectionEnd): it "
                   "exited abnormally or was killed; its last events may be missing\n",
                   section.pid(), section.command_line().c_str());
  }
  if (command.quiet) return;
  std::fprintf(err,
               "proftrace: wrote %s: %" PRIu64 " events (%" PRIu64 " API calls, %" PRIu64
               " GPU operations, %" PRIu64 " flows) from %" PRIu64 " records",
               command.output.c_str(), result.events_written, result.slices.api_slices,
               result.slices.gpu_slices, result.slices.flows, result.records_read);
  if (is_protobuf_name(command.output) && result.events_written > 0)
    std::fprintf(err, ", %.1f bytes per event", static_cast<double>(result.output_bytes) /
                                                    static_cast<double>(result.events_written));
  if (join.operations_without_activity > 0 && result.slices.gpu_slices == 0)
    std::fprintf(err, "; no GPU timing in the trace");
  std::fprintf(err, "\n");
}

}  // namespace

bool is_protobuf_name(std::string_view name) { return name.ends_with(".pftrace") || name.ends_with(".pftrace.gz"); }

std::string default_convert_output(const std::string& input, bool protobuf) {
  std::string stem = input;
  for (std::string_view ending : {".trace", ".part"}) {
    if (std::string_view(stem).ends_with(ending)) {
      stem.resize(stem.size() - ending.size());
      break;
    }
  }
  return stem + (protobuf ? ".pftrace" : ".json");
}

int run_convert(const ConvertCommand& command, std::FILE* err) {
  try {
    if (!command.step_range.empty() && !is_step_range(command.step_range)) {
      std::fprintf(err, "proftrace convert: --step-range '%s' is not an NVTX range NAME[@DOMAIN]\n",
                   command.step_range.c_str());
      return kExitError;
    }
    Trace trace;
    if (!load_trace(command.inputs, InputCheck::kComplete, &trace, err)) return kExitError;
    std::vector<InputTrace>& inputs = trace.inputs;
    const TraceModel& model = trace.model;
    std::string error;

    ConvertCommand resolved = command;
    if (resolved.output.empty()) {
      uint64_t input_bytes = 0;
      for (const auto& input : inputs) input_bytes += input.reader->file_bytes();
      const bool protobuf = input_bytes > kProtobufDefaultInputBytes;
      resolved.output = default_convert_output(command.inputs.front(), protobuf);
      if (protobuf)
        std::fprintf(err,
                     "proftrace: note: a large trace (%.0f MB, about %.0f M events): writing Perfetto protobuf "
                     "(%s), which the UI loads in a fraction of the JSON's size; -o NAME.json for JSON\n",
                     static_cast<double>(input_bytes) / 1e6, static_cast<double>(input_bytes) / 1e7,
                     resolved.output.c_str());
    }
    timeline::ConvertOptions options;
    options.join_window = resolved.join_window;
    options.show_progress = resolved.progress;
    options.stacks = resolved.stacks;
    options.step_range = resolved.step_range;
    timeline::ConvertResult result;
    StackFormatter stacks;
    std::vector<std::string> files;
    if (is_protobuf_name(resolved.output)) {
      emit::ProtobufOptions protobuf_options;
      protobuf_options.max_bytes = resolved.max_size;
      protobuf_options.compression = resolved.compression == "zstd"   ? emit::PacketCompression::kZstd
                                     : resolved.compression == "none" ? emit::PacketCompression::kNone
                                                                      : emit::PacketCompression::kDeflate;
      // Reading, encoding and compressing each keep a thread busy: the
      // compression gets its own only where a core is left for it.
      protobuf_options.compression_thread = usable_cpus() >= (options.writer_thread ? 3u : 2u);
      emit::ProtobufEmitter emitter(resolved.output, stacks, protobuf_options);
      if (!emitter.open(&error)) {
        std::fprintf(err, "proftrace: %s\n", error.c_str());
        return kExitError;
      }
      const bool written = timeline::convert(inputs, model, emitter, options, &result, &error);
      files = emitter.files();
      if (!written) {
        std::fprintf(err, "proftrace: %s: %s\n", resolved.output.c_str(), error.c_str());
        for (const std::string& file : files) std::remove(file.c_str());
        return kExitError;
      }
    } else {
      const bool to_stdout = resolved.output == "-";
      std::FILE* out = to_stdout ? stdout : std::fopen(resolved.output.c_str(), "wb");
      if (out == nullptr) {
        std::fprintf(err, "proftrace: %s: cannot create the output: %s\n", resolved.output.c_str(),
                     std::strerror(errno));
        return kExitError;
      }
      emit::JsonEmitter emitter(out, stacks);
      options.annotations_on_streams = true;
      const bool written = timeline::convert(inputs, model, emitter, options, &result, &error);
      const bool closed = to_stdout || std::fclose(out) == 0;
      if (!written || !closed) {
        std::fprintf(err, "proftrace: %s: %s: %s\n", resolved.output.c_str(),
                     written ? "closing the output failed" : error.c_str(), std::strerror(errno));
        if (!to_stdout) std::remove(resolved.output.c_str());
        return kExitError;
      }
    }
    const bool damaged = report_recovery(inputs, true, err);
    print_summary(resolved, result, stacks.problems(), model, err);
    if (files.size() > 1 && !resolved.quiet) {
      std::fprintf(err, "proftrace: the protobuf passed --max-size=%" PRIu64 " bytes: %zu files, each opens alone:",
                   resolved.max_size, files.size());
      for (const std::string& file : files) std::fprintf(err, " %s", file.c_str());
      std::fprintf(err, "\n");
    }
    return damaged && command.strict ? kExitDamagedInput : kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace: convert failed: %s\n", e.what());
    return kExitError;
  }
}

void add_convert_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<ConvertCommand>();
  CLI::App* sub = app.add_subcommand(
      "convert", "Convert traces to Perfetto JSON or protobuf (open in ui.perfetto.dev). Several input files, "
                 "and every process in them, go on one timeline.");
  sub->add_option("files", command->inputs, "proflaunch trace files (.trace or .part)")
      ->required();
  sub->add_option("-o,--output", command->output,
                  "output file: NAME.json (Perfetto JSON; - for stdout), NAME.pftrace (Perfetto protobuf, "
                  "packets compressed inside: ~20x smaller), NAME.pftrace.gz (gzipped as a whole). Default: next to the first input, protobuf "
                  "when it holds more than about 2 M events");
  sub->add_option("--max-size", command->max_size,
                  "protobuf: start a new file (NAME.2.pftrace, ...) once one holds this many bytes of packets "
                  "(before compression: what the UI loads); each opens alone in the UI (0: one file)")
      ->capture_default_str()
      ->transform(CLI::AsSizeValue(false));
  sub->add_option("--compression", command->compression,
                  "protobuf: how the packets are compressed inside the file. deflate: as Perfetto's own "
                  "tracing service does it, every trace processor and UI reads it; zstd: smaller and faster, "
                  "read only by trace processors from July 2026 on that were built with zstd; none. A "
                  ".pftrace.gz is gzipped as a whole instead")
      ->capture_default_str()
      ->check(CLI::IsMember({"deflate", "zstd", "none"}));
  sub->add_option("--join-window", command->join_window,
                  "how many launches and GPU activities may wait for their partner; bounds memory")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 26));
  sub->add_flag("--strict", command->strict,
                "exit with status 3 if an input was damaged (truncated or corrupt) and had to be recovered");
  sub->add_flag("-q,--quiet", command->quiet, "no summary on stderr (warnings still appear)");
  sub->add_option("--step-range", command->step_range,
                  "the NVTX range that is one step (ProfilerStep#N), NAME[@DOMAIN] as proflaunch --step-range "
                  "(default: found as stats finds them)");
  sub->add_flag("!--no-stacks", command->stacks,
                "leave call stacks out of the JSON (each API call's stack is text of ~1 KB)");
  sub->callback([command, &exit_code] {
    command->progress = isatty(STDERR_FILENO) != 0;
    exit_code = run_convert(*command, stderr);
  });
}

}  // namespace proflaunch::tools
