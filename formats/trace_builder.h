// Builds trace files record by record, for tests, the synthetic trace
// generator and tools that write traces. Records are collected per (section,
// chunk kind) and cut into chunks with ChunkEncoder, so the output is exactly
// what a reader sees from the shim. Not for the shim itself: it allocates.
//
//   TraceBuilder trace;
//   const uint64_t s = 0x51;
//   trace.process(s, {.pid = 100, .argv = {"train", "--fast"}});
//   const uint16_t launch_api = trace.api(s, "cuLaunchKernel", ApiDomain::kDriver);
//   trace.function(s, 0xF00, "_Z6kernelPf");
//   KernelLaunchRecord launch{};
//   launch.span = {.begin_ns = 10, .end_ns = 20, .correlation_id = 1, .api = launch_api};
//   launch.function = 0xF00;
//   trace.event(s, /*tid=*/100, launch);
//   trace.write_file("x.trace", &error);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/chunk_encoder.h"
#include "formats/records.h"

namespace proflaunch::format {

struct ProcessSpec {
  uint32_t pid = 1;
  uint32_t ppid = 0;
  std::string host = "localhost";
  std::vector<std::string> argv = {"program"};
  std::string executable;  // defaults to argv[0]
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = -1;
  uint32_t flags = 0;  // ProcessFlags
  uint64_t monotonic_ns = 1'000'000'000;
  uint64_t realtime_ns = 1'700'000'000'000'000'000;
  uint64_t boottime_ns = 1'000'000'000;
  uint64_t parent_section_id = 0;
  std::string tool_version = "test";
};

struct DeviceSpec {
  int32_t ordinal = 0;
  Vendor vendor = Vendor::kNvidia;
  std::string name = "Simulated GPU";
  uint32_t multiprocessor_count = 108;
  uint64_t total_memory_bytes = 80ull << 30;
  uint8_t uuid[16] = {};
  // DeviceInfo's occupancy limits; 0 (unknown) unless a test sets them.
  uint32_t max_threads_per_multiprocessor = 0;
  uint32_t max_blocks_per_multiprocessor = 0;
  uint32_t registers_per_multiprocessor = 0;
  uint32_t registers_per_block = 0;
  uint32_t shared_bytes_per_multiprocessor = 0;
  uint32_t shared_bytes_per_block = 0;
  uint32_t shared_bytes_per_block_optin = 0;
  uint32_t reserved_shared_bytes_per_block = 0;
  uint32_t warp_size = 0;
  uint16_t compute_capability_major = 0;
  uint16_t compute_capability_minor = 0;
};

// FunctionDef's resource fields; `known` is FunctionAttributeBits.
struct FunctionResources {
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t local_bytes_per_thread = 0;
  uint32_t known = 0;
};

class TraceBuilder {
 public:
  struct Options {
    size_t chunk_content_bytes = 1 << 20;  // a pending chunk is cut when it would exceed this
    int zstd_level = 1;
    bool file_header = true;  // false: only chunks (to append to another file)
  };

  // Where each chunk landed in the output, for tests that cut or corrupt it.
  struct ChunkSpan {
    uint64_t offset;
    uint64_t bytes;  // header + payload
    ChunkKind kind;
    uint64_t section_id;
    size_t records;
  };

  TraceBuilder();
  explicit TraceBuilder(Options options);
  // Streams finished chunks to `sink` instead of keeping them in memory (the
  // synthetic generator). bytes() then holds only what was not yet written.
  TraceBuilder(Options options, std::FILE* sink);

  // ---- Definitions (into the section's pending Definitions chunk)

  // ProcessInfo plus its strings. Call first for a section.
  void process(uint64_t section, const ProcessSpec& spec);
  // Interns `text`: the same text in the same section gives the same id.
  uint32_t string(uint64_t section, std::string_view text);
  // Defines API number `api` (or the next free one when 0) and returns it.
  uint16_t api(uint64_t section, std::string_view name, ApiDomain domain,
               Vendor vendor = Vendor::kNvidia, uint16_t api = 0);
  void function(uint64_t section, uint64_t handle, std::string_view mangled_name,
                uint64_t since_ns = 0, const FunctionResources& resources = {});
  void thread(uint64_t section, uint32_t tid, std::string_view name, uint64_t since_ns = 0);
  void device(uint64_t section, const DeviceSpec& spec);
  void section_end(uint64_t section, uint64_t end_ns, uint64_t records_written,
                   uint64_t records_dropped);

  // Any fixed-size definition record; the header is filled in.
  template <typename T>
  void define(uint64_t section, T record) {
    record.header = header_for<T>();
    append(section, ChunkKind::kDefinitions, &record, sizeof record);
  }

  // ---- Events (into the section's pending Events chunk)

  // A ThreadBatch is inserted whenever `tid` differs from the previous event
  // of the same pending chunk (and at the start of every chunk).
  template <typename T>
  void event(uint64_t section, uint32_t tid, T record) {
    record.header = header_for<T>();
    append_event(section, tid, &record, sizeof record);
  }

  // A record with a variable tail (GraphNode's dependencies, ...): the
  // header's `bytes` covers both.
  template <typename T>
  void event_with_tail(uint64_t section, uint32_t tid, T record, std::span<const uint8_t> tail) {
    record.header = header_for<T>();
    record.header.bytes = static_cast<uint16_t>(sizeof record + tail.size());
    std::vector<uint8_t> bytes(sizeof record + tail.size());
    std::memcpy(bytes.data(), &record, sizeof record);
    if (!tail.empty()) std::memcpy(bytes.data() + sizeof record, tail.data(), tail.size());
    append_event(section, tid, bytes.data(), bytes.size());
  }

  // ---- Raw access for tests

  // One record exactly as given (unknown kinds, wrong sizes, extensions).
  void raw_record(uint64_t section, ChunkKind kind, std::span<const uint8_t> record);
  // Bytes straight into the output between chunks (garbage, extra headers).
  void append_bytes(std::span<const uint8_t> bytes);

  // ---- Output

  // Cuts every pending chunk: Definitions before Events, sections in the
  // order they were first used.
  void flush();
  void flush(uint64_t section, ChunkKind kind);

  const std::vector<uint8_t>& bytes();  // flushes first
  const std::vector<ChunkSpan>& chunks() const { return chunks_; }
  uint64_t file_header_bytes() const { return options_.file_header ? sizeof(FileHeader) : 0; }
  // Flushes and writes everything to `path`. On failure sets `error`.
  bool write_file(const std::string& path, std::string* error);
  // False once encoding or writing to the sink failed.
  bool ok() const { return ok_; }

 private:
  struct Pending {
    uint64_t section;
    ChunkKind kind;
    std::vector<uint8_t> content;
    size_t records = 0;
    bool has_thread = false;
    uint32_t thread = 0;
  };
  struct SectionState {
    std::unordered_map<std::string, uint32_t> string_ids;
    uint32_t next_string_id = 1;
    uint16_t next_api = 1;
  };

  void append(uint64_t section, ChunkKind kind, const void* record, size_t bytes);
  void append_event(uint64_t section, uint32_t tid, const void* record, size_t bytes);
  void write_string(uint64_t section, uint32_t id, std::string_view text);
  Pending& pending(uint64_t section, ChunkKind kind);
  void encode(Pending& chunk);
  void emit(const uint8_t* data, size_t bytes);

  Options options_;
  std::FILE* sink_ = nullptr;
  std::unique_ptr<ChunkEncoder> encoder_;  // a pointer so that builders can be returned by value
  std::vector<uint8_t> out_;
  uint64_t out_offset_ = 0;  // file offset of out_[0] (non-zero once streamed to the sink)
  std::vector<uint8_t> encode_buffer_;
  std::vector<Pending> pending_;  // few sections at a time: a vector searched linearly
  std::unordered_map<uint64_t, SectionState> sections_;
  std::vector<ChunkSpan> chunks_;
  bool ok_ = true;
};

}  // namespace proflaunch::format
