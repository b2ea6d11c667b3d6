// What a trace (one joined file, or the parts of a run) says, grouped by
// section, read with the formats reader. Tests assert on this, not on bytes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/reader.h"
#include "formats/records.h"

namespace proflaunch::testing {

struct ProbeCall {
  uint32_t tid;
  uint64_t order;  // position among the section's events, in file order
  format::ApiCallRecord record;
  uint64_t value() const { return record.span.correlation_id; }
};

struct ThreadLost {
  uint32_t tid;
  uint64_t order;
  format::LostRecord record;
};

struct SectionContents {
  uint64_t id = 0;
  std::optional<format::ProcessInfoRecord> process;
  bool process_info_first = false;  // first record of the section's first Definitions chunk
  std::map<uint32_t, std::string> strings;
  std::map<uint16_t, format::ApiDefRecord> apis;
  std::vector<format::ThreadInfoRecord> threads;
  std::vector<ProbeCall> calls;  // in file order
  std::vector<ThreadLost> lost;
  std::optional<format::SectionEndRecord> end;
  uint64_t events_chunks = 0;
  uint64_t definitions_chunks = 0;
  uint64_t events_before_thread_batch = 0;  // event records with no ThreadBatch before them
  uint64_t events_seen = 0;

  std::string string(uint32_t id) const;
  uint64_t lost_count() const;
  // Latest name of `tid` (from ThreadInfo records), "" when none.
  std::string thread_name(uint32_t tid) const;
  std::vector<std::string> thread_names(uint32_t tid) const;
};

struct TraceContents {
  std::map<uint64_t, SectionContents> sections;
  std::vector<format::ReadReport> reports;  // one per file
  uint64_t files = 0;

  bool all_clean() const;
  std::string problems() const;
  // Sections of process `pid`, ordered by start time.
  std::vector<const SectionContents*> sections_of(uint32_t pid) const;
  uint64_t total_calls() const;
  uint64_t total_lost() const;
};

// Reads every file (each must start with a valid FileHeader). Sets `error`
// and returns what it read so far when a file cannot be opened.
TraceContents load_trace(const std::vector<std::string>& paths, std::string* error);

}  // namespace proflaunch::testing
