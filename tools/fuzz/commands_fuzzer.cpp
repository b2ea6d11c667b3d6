// libFuzzer entry point for the proftrace commands: convert (JSON, and
// protobuf cut into small shards), info, dump, stats, memory, export
// (SQLite) and report (the HTML page), run in
// process on one trace built from the input (tools/fuzz/record_list.h).
//
// Built twice, as the reader fuzzer is: with clang -fsanitize=fuzzer,address
// (scripts/fuzz.sh), and with the normal compiler into
// commands_fuzz_runner, which meson test runs over the corpus, the
// regressions and record-level mutations of them.
//
// Besides "does not crash or hang", it checks what a user is promised: every
// command exits 0, 1 (nothing readable: with a message) or 3 (--strict and
// damaged), and convert, export and report either write their output or
// leave none (export and report: not even their .partial file).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/fuzz/record_list.h"
#include "tools/proftrace/commands.h"

namespace {

using namespace proflaunch;

[[noreturn]] void invariant_broken(const char* what) {
  std::fprintf(stderr, "commands fuzzer: invariant broken: %s\n", what);
  __builtin_trap();
}

// A stream whose text is kept, so that a failure's message can be checked.
class CapturedStream {
 public:
  CapturedStream() : file_(open_memstream(&text_, &size_)) {}
  ~CapturedStream() {
    if (file_ != nullptr) std::fclose(file_);
    std::free(text_);
  }
  std::FILE* get() const { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(text_, size_);
  }

 private:
  char* text_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

void check_exit(int code, CapturedStream& err, const char* command) {
  if (code != tools::kExitOk && code != tools::kExitError && code != tools::kExitDamagedInput)
    invariant_broken(command);
  if (code == tools::kExitError && err.text().empty()) invariant_broken("a failure without a message");
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> trace = fuzz::to_trace(data, size);
  const std::string prefix = "/dev/shm/proflaunch-fuzz-" + std::to_string(getpid());
  const std::string input = prefix + ".trace";
  if (std::FILE* file = std::fopen(input.c_str(), "wb")) {
    std::fwrite(trace.data(), 1, trace.size(), file);
    std::fclose(file);
  } else {
    return 0;  // no /dev/shm: nothing to test here
  }
  std::FILE* null = std::fopen("/dev/null", "w");

  for (const std::string output : {prefix + ".json", prefix + ".pftrace"}) {
    CapturedStream err;
    tools::ConvertCommand convert;
    convert.inputs = {input};
    convert.output = output;
    convert.max_size = 4096;  // shards after a few packets
    convert.join_window = 1 + size % 64;
    convert.strict = size % 2 == 0;
    const int code = tools::run_convert(convert, err.get());
    check_exit(code, err, "convert");
    if ((code == tools::kExitError) == exists(output)) invariant_broken("convert's output and exit status disagree");
    std::remove(output.c_str());
    for (size_t shard = 2; std::remove((prefix + "." + std::to_string(shard) + ".pftrace").c_str()) == 0; ++shard) {
    }
  }
  {
    CapturedStream err;
    check_exit(tools::run_info({.inputs = {input}}, null, err.get()), err, "info");
  }
  {
    CapturedStream err;
    check_exit(tools::run_dump({.inputs = {input}}, null, err.get()), err, "dump");
  }
  {
    CapturedStream err;
    tools::StatsCommand stats;
    stats.inputs = {input};
    stats.timeline_bins = 7;  // the overview's activity table too
    check_exit(tools::run_stats(stats, null, err.get()), err, "stats");
  }
  {
    CapturedStream err;
    tools::MemoryCommand memory;
    memory.inputs = {input};
    memory.report = true;
    memory.json = "/dev/null";
    memory.timeline_points = 64;
    check_exit(tools::run_memory(memory, null, err.get()), err, "memory");
  }
  {
    CapturedStream err;
    tools::ExportCommand sql;
    sql.inputs = {input};
    sql.sqlite = prefix + ".sqlite";
    sql.strict = size % 2 == 1;
    sql.quiet = true;
    const int code = tools::run_export(sql, err.get());
    check_exit(code, err, "export");
    if ((code == tools::kExitError) == exists(sql.sqlite)) invariant_broken("export's output and exit status disagree");
    if (exists(sql.sqlite + ".partial")) invariant_broken("export left its .partial file");
    std::remove(sql.sqlite.c_str());
  }
  {
    CapturedStream err;
    tools::ReportCommand report;
    report.inputs = {input};
    report.output = prefix + ".html";
    report.strict = size % 2 == 0;
    report.quiet = true;
    report.top = 5;
    const int code = tools::run_report(report, err.get());
    check_exit(code, err, "report");
    if ((code == tools::kExitError) == exists(report.output)) invariant_broken("report's page and exit status disagree");
    if (exists(report.output + ".partial")) invariant_broken("report left its .partial file");
    std::remove(report.output.c_str());
  }
  std::fclose(null);
  std::remove(input.c_str());
  return 0;
}
