// Pieces of the JSON report shared with the CSV and HTML writers.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/memory/memory_report.h"

namespace proflaunch::tools::memory {

// A space as the outputs name it: "<section hex>/<device>" or "<section hex>/host".
std::string space_id(const SpaceKey& key);
std::string hex_text(uint64_t value);  // "0x7f00"

// The columns of a timeline row (time relative to the report's base).
inline constexpr const char* kTimelineColumns[] = {
    "time_ns",      "allocated_bytes",     "reserved_bytes", "device_bytes",
    "pool_bytes",   "mapped_bytes",        "managed_bytes",  "pool_reserved_bytes",
    "physical_bytes", "pinned_bytes",      "registered_bytes", "live_blocks"};
std::array<uint64_t, std::size(kTimelineColumns)> timeline_row(const Sample& sample, uint64_t base_ns);

// The report as one JSON object, into `writer`.
void write_report_json(const MemoryReport& report, const std::string& title, JsonWriter& writer);

}  // namespace proflaunch::tools::memory
