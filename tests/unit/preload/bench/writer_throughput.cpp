// Sustained throughput: the highest steady record rate one thread can keep up
// for a second with the default buffer and zero drops, with the real writer
// compressing and writing on the other core. Each rate runs in a fresh child
// process; the totals come from the part's SectionEnd.
//
//   build/tests/unit/preload/writer_throughput [rate ...]   (records/s)
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "formats/records.h"
#include "preload/process/lifecycle.h"
#include "preload/record/emit.h"
#include "tests/unit/preload/support/process_runner.h"
#include "tests/unit/preload/support/trace_contents.h"

namespace {

using namespace proflaunch;

// Emits `rate` records/s for `seconds`, in 1 ms bursts.
void produce(uint64_t rate, double seconds) {
  const uint64_t per_ms = rate / 1000;
  const uint64_t start = now_ns();
  const uint64_t total_ms = static_cast<uint64_t>(seconds * 1000);
  uint64_t value = 0;
  for (uint64_t ms = 0; ms < total_ms; ++ms) {
    for (uint64_t i = 0; i < per_ms; ++i) {
      if (auto* record = emit<format::ApiCallRecord>()) {
        record->span.begin_ns = now_ticks();
        record->span.end_ns = record->span.begin_ns;
        record->span.correlation_id = value;
        record->span.api = 1;
        commit();
      }
      ++value;
    }
    while (now_ns() < start + (ms + 1) * 1000000) {
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<uint64_t> rates;
  for (int i = 1; i < argc; ++i) rates.push_back(std::strtoull(argv[i], nullptr, 10));
  if (rates.empty()) rates = {500000, 1000000, 2000000, 4000000, 6000000, 8000000};

  for (uint64_t rate : rates) {
    proflaunch::testing::TempDir dir;
    const pid_t child = fork();
    if (child == 0) {
      Config config;
      std::strcpy(config.parts_dir, dir.path().c_str());
      config.buffer_bytes_per_thread = kDefaultBufferBytes;
      config.flush_interval_ms = kDefaultFlushIntervalMs;
      runtime::start(config);
      produce(rate, 1.0);
      runtime::finish();
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::string error;
    const auto trace =
        proflaunch::testing::load_trace(proflaunch::testing::list_files(dir.path(), ".part"), &error);
    uint64_t written = 0, dropped = 0, bytes = 0;
    for (const auto& [id, section] : trace.sections) {
      if (section.end) {
        written += section.end->records_written;
        dropped += section.end->records_dropped;
      }
    }
    for (const auto& path : proflaunch::testing::list_files(dir.path(), ".part")) {
      FILE* file = std::fopen(path.c_str(), "rb");
      if (file) {
        std::fseek(file, 0, SEEK_END);
        bytes += static_cast<uint64_t>(std::ftell(file));
        std::fclose(file);
      }
    }
    std::printf("%9llu records/s for 1 s: %9llu written, %9llu dropped, part %.1f MiB (%.1f B/record)\n",
                static_cast<unsigned long long>(rate), static_cast<unsigned long long>(written),
                static_cast<unsigned long long>(dropped), bytes / 1048576.0,
                written ? static_cast<double>(bytes) / written : 0.0);
  }
  return 0;
}
