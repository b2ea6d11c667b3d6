// proftrace info FILE...: what is in a trace, and what state it is in.
#include <CLI/CLI.hpp>

#include <cinttypes>
#include <ctime>
#include <memory>

#include "formats/record_kinds.h"
#include "tools/proftrace/commands.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/interpret/trace_model.h"
#include "tools/proftrace/trace_statistics.h"

namespace proflaunch::tools {

using namespace proflaunch::format;

namespace {

std::string utc_time(uint64_t realtime_ns) {
  const std::time_t seconds = static_cast<std::time_t>(realtime_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  char full[96];
  std::snprintf(full, sizeof full, "%s.%09" PRIu64 "Z", text, realtime_ns % 1'000'000'000);
  return full;
}

std::string seconds(uint64_t ns) {
  char text[48];
  std::snprintf(text, sizeof text, "%" PRIu64 ".%09" PRIu64 " s", ns / 1'000'000'000, ns % 1'000'000'000);
  return text;
}

void print_file(const InputTrace& input, std::FILE* out) {
  const FileHeader& header = input.reader->header();
  std::fprintf(out, "file %s: %" PRIu64 " bytes, trace format version %u (this proftrace reads up to %u)\n",
               input.path.c_str(), input.reader->file_bytes(), header.format_version, kFormatVersion);
  std::fprintf(out, "  features: required %s, optional %s\n", hex(header.required_features).c_str(),
               hex(header.optional_features).c_str());
  const ReadReport& report = input.events_report;
  std::fprintf(out, "  chunks: %s\n", summarize(report).c_str());
  if (report.embedded_file_headers > 0)
    std::fprintf(out, "  %" PRIu64 " concatenated part files\n", report.embedded_file_headers + 1);
  if (report.truncated_tail)
    std::fprintf(out, "  TRUNCATED: the file ends inside a chunk at offset %" PRIu64
                      "; everything before it was recovered\n", report.truncated_tail_offset);
  for (const auto& note : report.notes)
    std::fprintf(out, "  damage at offset %" PRIu64 ": %s\n", note.file_offset, note.reason.c_str());
}

void print_process(const SectionModel& section, const StatisticsCollector& statistics,
                   const std::vector<InputTrace>& inputs, std::FILE* out) {
  if (!section.process) {
    std::fprintf(out, "  section %s: no ProcessInfo (its definitions were lost)\n",
                 hex(section.section_id).c_str());
  } else {
    const auto& p = *section.process;
    std::fprintf(out, "  pid %u (ppid %u) on %s", p.pid, p.ppid,
                 section.host().empty() ? "unknown host" : section.host().c_str());
    if (p.rank >= 0) {
      std::fprintf(out, ", rank %d", p.rank);
      if (p.world_size >= 0) std::fprintf(out, " of %d", p.world_size);
      if (p.local_rank >= 0) std::fprintf(out, " (local rank %d)", p.local_rank);
    }
    if (p.flags & kProcessForked) std::fprintf(out, ", forked");
    if (p.flags & kProcessAfterExec) std::fprintf(out, ", after exec");
    std::fprintf(out, "\n    command line: %s\n", section.command_line().c_str());
    std::fprintf(out, "    started %s (monotonic %s), section %s in %s\n", utc_time(p.realtime_ns).c_str(),
                 seconds(p.monotonic_ns).c_str(), hex(section.section_id).c_str(),
                 inputs[section.input_index].path.c_str());
  }
  if (section.end) {
    std::fprintf(out, "    complete: %" PRIu64 " records written, %" PRIu64 " dropped\n",
                 section.end->records_written, section.end->records_dropped);
  } else {
    std::fprintf(out, "    INCOMPLETE: no SectionEnd (the process died or was killed before the profiler finished)\n");
  }
  for (const auto& [ordinal, device] : section.devices) {
    // The driver's name often carries the vendor already ("NVIDIA H200").
    const std::string vendor = vendor_name(device.vendor);
    const std::string name(section.string(device.name_string));
    const std::string label = name.rfind(vendor + " ", 0) == 0 ? name : vendor + " " + name;
    std::fprintf(out, "    device %d: %s, %u SMs, %" PRIu64 " MiB\n", ordinal, label.c_str(),
                 device.multiprocessor_count, device.total_memory_bytes >> 20);
  }
  std::fprintf(out, "    threads named: %zu, kernels defined: %zu, APIs defined: %zu\n",
               section.threads.size(), section.functions.size(), section.apis.size());
  auto stats = statistics.sections().find(section.section_id);
  if (stats != statistics.sections().end()) {
    std::fprintf(out, "    event records: %" PRIu64, stats->second.event_records);
    if (stats->second.lost_records > 0) std::fprintf(out, ", LOST: %" PRIu64, stats->second.lost_records);
    if (stats->second.counted_calls > 0)
      std::fprintf(out, ", counted calls: %" PRIu64, stats->second.counted_calls);
    std::fprintf(out, "\n");
    const SectionStatistics& st = stats->second;
    if (st.has_cpu_sampling_info || st.cpu_samples > 0 || st.cpu_samples_lost > 0) {
      std::fprintf(out, "    CPU samples: %" PRIu64 " (%" PRIu64 " periods), lost: %" PRIu64, st.cpu_samples,
                   st.cpu_sample_periods, st.cpu_samples_lost);
      if (st.has_cpu_sampling_info)
        std::fprintf(out, "; sampling %s at %u Hz, signal %u", cpu_sampling_state_name(st.cpu_sampling_state).c_str(),
                     st.cpu_sampling_hz, st.cpu_sampling_signal);
      std::fprintf(out, "\n");
    }
  }
}

}  // namespace

int run_info(const InfoCommand& command, std::FILE* out, std::FILE* err) {
  try {
    std::vector<InputTrace> inputs;
    std::string error;
    if (!open_inputs(command.inputs, &inputs, &error)) {
      std::fprintf(err, "proftrace: %s\n", error.c_str());
      return kExitError;
    }
    TraceModel model;
    StatisticsCollector statistics;
    // Which GPU timing backend ran and why, and the device work no hooked
    // call accounts for (the hooks' coverage, as the backend saw it).
    struct Timing {
      uint64_t section;
      format::GpuTimingInfoRecord info;
    };
    std::vector<Timing> timing;
    uint64_t unattributed = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      // One pass decodes everything: definitions feed the model, all records
      // the statistics.
      struct Both : RecordVisitor {
        DefinitionsCollector* definitions;
        StatisticsCollector* statistics;
        std::vector<Timing>* timing;
        uint64_t* unattributed;
        void on_record(const RecordView& record) override {
          definitions->on_record(record);
          statistics->on_record(record);
          if (record.record_kind() == RecordKind::kGpuTimingInfo)
            timing->push_back(Timing{record.section_id, record.as<format::GpuTimingInfoRecord>()});
          else if (record.record_kind() == RecordKind::kUnattributedGpuWork)
            ++*unattributed;
        }
      } both;
      both.timing = &timing;
      both.unattributed = &unattributed;
      DefinitionsCollector definitions(model, i);
      both.definitions = &definitions;
      both.statistics = &statistics;
      inputs[i].events_report = inputs[i].reader->read(both, ChunkSelection::kAll);
    }

    for (const auto& input : inputs) print_file(input, out);

    const auto sections = model.ordered();
    std::fprintf(out, "processes: %zu\n", sections.size());
    for (const SectionModel* section : sections) print_process(*section, statistics, inputs, out);

    std::fprintf(out, "records by kind:\n");
    for (RecordKind kind : kKnownRecordKinds) {
      const uint64_t n = statistics.count(static_cast<uint16_t>(kind));
      if (n > 0)
        std::fprintf(out, "  %-20s %8" PRIu64 "\n",
                     std::string(*record_kind_name(static_cast<uint16_t>(kind))).c_str(), n);
    }
    // The reader skips kinds it does not know; it counts them.
    uint64_t unknown = 0;
    for (const auto& input : inputs) unknown += input.events_report.records_unknown_kind;
    if (unknown > 0) std::fprintf(out, "  %-20s %8" PRIu64 "\n", "(unknown kinds)", unknown);

    if (statistics.has_time_span()) {
      std::fprintf(out, "time span: %s (CLOCK_MONOTONIC %s to %s)\n",
                   seconds(statistics.last_ns() - statistics.first_ns()).c_str(),
                   seconds(statistics.first_ns()).c_str(), seconds(statistics.last_ns()).c_str());
    } else {
      std::fprintf(out, "time span: no timed events\n");
    }

    for (const Timing& t : timing) {
      const SectionModel* section = model.find(t.section);
      const std::string_view reason = section != nullptr ? section->string(t.info.reason_string) : "";
      std::string line = "gpu timing: " + gpu_timing_source_name(t.info.source);
      if (!reason.empty()) line += " (" + std::string(reason) + ")";
      std::fprintf(out, "%s\n", line.c_str());
    }
    if (!timing.empty() || unattributed > 0)
      std::fprintf(out, "unattributed GPU work (no hooked call launched it): %" PRIu64 "\n", unattributed);
    uint64_t outside_windows = 0;
    for (const auto& [id, stats] : statistics.sections()) outside_windows += stats.outside_window_work;
    if (outside_windows > 0)
      std::fprintf(out,
                   "GPU work of calls outside the capture windows (timed by CUPTI, not recorded): %" PRIu64 "\n",
                   outside_windows);

    uint64_t lost_total = 0, lost_records = 0, dropped_total = 0;
    std::map<uint32_t, uint64_t> lost_by_reason;
    for (const auto& [id, stats] : statistics.sections()) {
      lost_total += stats.lost_records;
      for (const auto& [reason, n] : stats.lost_by_reason) lost_by_reason[reason] += n;
    }
    for (const auto& [id, stats] : statistics.sections()) lost_records += stats.lost_record_count;
    for (const auto& [id, section] : model.sections())
      if (section.end) dropped_total += section.end->records_dropped;
    std::fprintf(out, "dropped events: %" PRIu64 " in %" PRIu64 " LOST records", lost_total, lost_records);
    for (const auto& [reason, n] : lost_by_reason)
      std::fprintf(out, ", %s: %" PRIu64, lost_reason_name(reason).c_str(), n);
    std::fprintf(out, "; SectionEnd.records_dropped total: %" PRIu64 "\n", dropped_total);

    bool damaged = false;
    for (const auto& input : inputs) damaged = damaged || !input.events_report.clean();
    std::fprintf(out, "recovery: %s\n", damaged ? "the input was damaged; see the chunk lines above"
                                                 : "clean, nothing skipped");
    return kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace: info failed: %s\n", e.what());
    return kExitError;
  }
}

void add_info_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<InfoCommand>();
  CLI::App* sub = app.add_subcommand(
      "info", "Summarize traces: format, processes, record counts, time span, dropped events, damage");
  sub->add_option("files", command->inputs, "proflaunch trace files")->required();
  sub->callback([command, &exit_code] { exit_code = run_info(*command, stdout, stderr); });
}

}  // namespace proflaunch::tools
