// `proftrace memory --csv DIR`: the report as tables, one file each, for
// spreadsheets and pandas. Times are ns since the report's base; sizes bytes.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/memory/report_json.h"
#include "tools/proftrace/memory/report_writers.h"

namespace proflaunch::tools::memory {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// A CSV field: quoted when it holds a comma, quote or line break.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

int64_t relative(uint64_t ns, uint64_t base_ns) { return static_cast<int64_t>(ns - base_ns); }

void allocation_header(std::FILE* f) {
  std::fputs("space,address,bytes,kind,time_ns,end_ns,api,tid,thread,correlation_id,stack\n", f);
}

void allocation_row(std::FILE* f, const AllocationView& a, uint64_t base_ns) {
  std::fprintf(f, "%s,%s,%llu,%s,%lld,%s,%s,%u,%s,%llu,%s\n", space_id(a.space).c_str(), hex_text(a.address).c_str(),
               static_cast<unsigned long long>(a.bytes), field(allocation_kind_name(a.kind)).c_str(),
               static_cast<long long>(relative(a.time_ns, base_ns)),
               a.end_ns != 0 ? std::to_string(relative(a.end_ns, base_ns)).c_str() : "", field(a.api).c_str(), a.tid,
               field(a.thread).c_str(), static_cast<unsigned long long>(a.correlation_id),
               a.stack ? field(*a.stack).c_str() : "-");
}

class CsvDirectory {
 public:
  CsvDirectory(const std::string& directory, std::string* error) : directory_(directory), error_(error) {}

  File open(const char* name) {
    const std::string path = directory_ + "/" + name;
    File file(std::fopen(path.c_str(), "w"));
    if (!file && error_->empty()) *error_ = path + ": " + std::strerror(errno);
    return file;
  }
  bool close(File file, const char* name) {
    if (!file) return false;
    const bool ok = std::ferror(file.get()) == 0 && std::fclose(file.release()) == 0;
    if (!ok && error_->empty()) *error_ = directory_ + "/" + name + ": writing failed";
    return ok;
  }

 private:
  std::string directory_;
  std::string* error_;
};

bool write_spaces(CsvDirectory& dir, const MemoryReport& report) {
  File f = dir.open("spaces.csv");
  if (!f) return false;
  std::fputs("space,pid,device,label,peak_allocated_bytes,peak_allocated_time_ns,peak_reserved_bytes,"
             "peak_reserved_time_ns,peak_managed_bytes,peak_pinned_bytes,peak_pinned_time_ns,allocations,frees,"
             "failures,live_at_peak_count,leaked_blocks,leaked_bytes,churn_allocations_per_s,churn_frees_per_s\n",
             f.get());
  for (const SpaceReport& s : report.spaces)
    std::fprintf(f.get(), "%s,%u,%s,%s,%llu,%lld,%llu,%lld,%llu,%llu,%lld,%llu,%llu,%llu,%llu,%llu,%llu,%.3f,%.3f\n",
                 space_id(s.key).c_str(), s.pid, s.is_host() ? "host" : std::to_string(s.key.device).c_str(),
                 field(space_label(s)).c_str(), static_cast<unsigned long long>(s.peak_allocated.bytes),
                 static_cast<long long>(relative(s.peak_allocated.time_ns, report.base_ns)),
                 static_cast<unsigned long long>(s.peak_reserved.bytes),
                 static_cast<long long>(relative(s.peak_reserved.time_ns, report.base_ns)),
                 static_cast<unsigned long long>(s.peak_managed.bytes),
                 static_cast<unsigned long long>(s.peak_pinned.bytes),
                 static_cast<long long>(relative(s.peak_pinned.time_ns, report.base_ns)),
                 static_cast<unsigned long long>(s.allocations), static_cast<unsigned long long>(s.frees),
                 static_cast<unsigned long long>(s.failures), static_cast<unsigned long long>(s.live_at_peak_count),
                 static_cast<unsigned long long>(s.leaked_blocks), static_cast<unsigned long long>(s.leaked_bytes),
                 s.churn.allocations_per_s(), s.churn.frees_per_s());
  return dir.close(std::move(f), "spaces.csv");
}

bool write_timeline(CsvDirectory& dir, const MemoryReport& report) {
  File f = dir.open("timeline.csv");
  if (!f) return false;
  std::fputs("space", f.get());
  for (const char* column : kTimelineColumns) std::fprintf(f.get(), ",%s", column);
  std::fputc('\n', f.get());
  for (const SpaceReport& s : report.spaces) {
    const std::string id = space_id(s.key);
    for (const Sample& sample : s.timeline) {
      std::fputs(id.c_str(), f.get());
      for (uint64_t value : timeline_row(sample, report.base_ns))
        std::fprintf(f.get(), ",%llu", static_cast<unsigned long long>(value));
      std::fputc('\n', f.get());
    }
  }
  return dir.close(std::move(f), "timeline.csv");
}

bool write_allocations(CsvDirectory& dir, const char* name, const MemoryReport& report, bool at_peak) {
  File f = dir.open(name);
  if (!f) return false;
  allocation_header(f.get());
  if (at_peak) {
    for (const SpaceReport& s : report.spaces)
      for (const AllocationView& a : s.live_at_peak) allocation_row(f.get(), a, report.base_ns);
  } else {
    for (const AllocationView& a : report.leaks) allocation_row(f.get(), a, report.base_ns);
  }
  return dir.close(std::move(f), name);
}

bool write_failures(CsvDirectory& dir, const MemoryReport& report) {
  File f = dir.open("failures.csv");
  if (!f) return false;
  std::fputs("space,time_ns,api,kind,result,requested_bytes,tid,thread,allocated_bytes,reserved_bytes,live_blocks,"
             "correlation_id\n",
             f.get());
  for (const FailureReport& x : report.failures)
    std::fprintf(f.get(), "%s,%lld,%s,%s,%s,%llu,%u,%s,%llu,%llu,%llu,%llu\n", space_id(x.space).c_str(),
                 static_cast<long long>(relative(x.time_ns, report.base_ns)), field(x.api).c_str(),
                 field(allocation_kind_name(x.kind)).c_str(), cuda_result_name(x.result).c_str(),
                 static_cast<unsigned long long>(x.requested_bytes), x.tid, field(x.thread).c_str(),
                 static_cast<unsigned long long>(x.totals.allocated()),
                 static_cast<unsigned long long>(x.totals.reserved()),
                 static_cast<unsigned long long>(x.totals.live_blocks),
                 static_cast<unsigned long long>(x.correlation_id));
  return dir.close(std::move(f), "failures.csv");
}

}  // namespace

bool write_csv_report(const MemoryReport& report, const std::string& directory, std::string* error) {
  error->clear();
  if (mkdir(directory.c_str(), 0777) != 0 && errno != EEXIST) {
    *error = directory + ": cannot create the directory: " + std::strerror(errno);
    return false;
  }
  CsvDirectory dir(directory, error);
  bool ok = write_spaces(dir, report);
  ok = write_timeline(dir, report) && ok;
  ok = write_allocations(dir, "live_at_peak.csv", report, true) && ok;
  ok = write_allocations(dir, "leaks.csv", report, false) && ok;
  ok = write_failures(dir, report) && ok;
  return ok;
}

}  // namespace proflaunch::tools::memory
