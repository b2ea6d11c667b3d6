// The proftrace subcommands. Each lives in its own cmd_<name>.cpp: the
// options it takes, how it registers with CLI11, and a run function that
// tests call directly. run_* never throw and return the process exit code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace proflaunch::tools {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;         // unreadable input, failed output
inline constexpr int kExitDamagedInput = 3;  // --strict and the input needed recovery

struct ConvertCommand {
  std::vector<std::string> inputs;
  // "-" for stdout (JSON); .pftrace / .pftrace.gz: protobuf; else JSON.
  // Empty: next to the first input, protobuf for large traces.
  std::string output;
  uint64_t max_size = uint64_t{1} << 30;  // protobuf: bytes per file before the next one
  std::string compression = "deflate";  // protobuf: the packets inside the file (deflate, zstd, none)
  size_t join_window = 1 << 17;
  bool strict = false;
  bool quiet = false;
  bool progress = false;  // set from isatty(stderr) by the CLI
  bool stacks = true;     // the "stack" arg of API slices (--no-stacks: smaller JSON)
  std::string step_range;  // ProfilerStep#N: the NVTX range that is one step, as stats --step-range
};
int run_convert(const ConvertCommand& command, std::FILE* err);
// Where convert writes without -o: next to the input, "run.trace" ->
// "run.json" or "run.pftrace".
std::string default_convert_output(const std::string& input, bool protobuf);
bool is_protobuf_name(std::string_view name);  // .pftrace or .pftrace.gz

struct ViewCommand {
  std::vector<std::string> inputs;  // traces to convert, or one converted file
  std::string output;               // the converted file; default: next to the first input
  int port = 9001;
  std::string origin = "https://ui.perfetto.dev";
  bool open_browser = true;         // when there is a display
  double timeout_s = 0;             // give up waiting for the UI after this long (0: never)
};
int run_view(const ViewCommand& command, std::FILE* out, std::FILE* err);

struct InfoCommand {
  std::vector<std::string> inputs;
};
int run_info(const InfoCommand& command, std::FILE* out, std::FILE* err);

struct DumpCommand {
  std::vector<std::string> inputs;
  bool definitions_only = false;
};
int run_dump(const DumpCommand& command, std::FILE* out, std::FILE* err);

struct MemoryCommand {
  std::vector<std::string> inputs;
  std::string html;           // -o: the HTML page
  std::string json;
  std::string csv_directory;
  bool report = false;        // the text report even when writing files
  size_t top = 10;
  size_t timeline_points = 4000;
  uint64_t reorder_window_ms = 500;
  bool strict = false;
};
int run_memory(const MemoryCommand& command, std::FILE* out, std::FILE* err);
struct StatsCommand {
  std::vector<std::string> inputs;
  std::vector<std::string> sections;  // empty: all
  bool csv = false;
  bool json = false;  // one JSON document with every table (not with csv)
  bool strict = false;
  // The sections that rank call sites (call-sites, alloc-sites, code):
  size_t top = 20;
  std::string by = "line";     // code: line, function, file, module
  std::string order = "gpu";   // code: gpu, calls, avg, bytes, allocs, stacks, name
  std::string min_time = "0";  // code: rows with less GPU time are left out; "500us", "2ms", "1s", ns when bare
  bool full_stacks = false;    // code: each row's heaviest stack under it (text; CSV and JSON always carry it)
  std::string step_range;      // overview: the step's NVTX range, NAME[@DOMAIN] as proflaunch --step-range
  size_t timeline_bins = 0;    // overview: also the GPU activity over time in this many bins
  std::string during;          // cpu: "" (all) or "gpu-idle"
  size_t step = 0;             // cpu: only step N (1 = the first, as recommendations name them); 0: all
};
// "1.5ms" -> 1500000; units ns, us, ms, s; a bare number is ns. False when
// `text` is not such a duration.
bool parse_duration_ns(const std::string& text, uint64_t* ns);
// Whether `text` names an NVTX range as proflaunch --step-range does: NAME[@DOMAIN].
bool is_step_range(const std::string& text);
int run_stats(const StatsCommand& command, std::FILE* out, std::FILE* err);

struct ExportCommand {
  std::vector<std::string> inputs;
  std::string sqlite;  // the database to write
  bool force = false;  // replace `sqlite` when it exists (else refused)
  bool strict = false;
  bool quiet = false;
};
int run_export(const ExportCommand& command, std::FILE* err);

struct ReportCommand {
  std::vector<std::string> inputs;  // one trace, or one per rank
  std::string output;               // the page; default: next to the first input, NAME-report.html
  std::string json;                 // also the page's data as one JSON document ("-": stdout)
  size_t top = 200;                 // rows of each code table
  std::string step_range;           // as stats --step-range
  bool strict = false;
  bool quiet = false;
};
int run_report(const ReportCommand& command, std::FILE* err);
// "run.trace" -> "run-report.html".
std::string default_report_output(const std::string& input);

// CLI11 wiring; the subcommand stores its exit code in `exit_code`.
void add_convert_command(CLI::App& app, int& exit_code);
void add_info_command(CLI::App& app, int& exit_code);
void add_dump_command(CLI::App& app, int& exit_code);
void add_memory_command(CLI::App& app, int& exit_code);
void add_stats_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);
void add_view_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);

// Shared by the commands: one line per damaged input ("<file>: recovered ...").
// Returns true if any input needed recovery.
struct InputTrace;
bool report_recovery(const std::vector<InputTrace>& inputs, bool combine_two_passes, std::FILE* err);

}  // namespace proflaunch::tools
