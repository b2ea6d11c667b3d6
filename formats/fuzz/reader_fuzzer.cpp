// libFuzzer entry point for the trace reader. Built twice: with clang
// -fsanitize=fuzzer,address (meson -Dfuzzing=true) for real fuzzing, and
// with the normal compiler into fuzz_regression_runner, which meson test runs
// over the seed corpus so that CI exercises the same code.
//
// Besides "does not crash", it checks the reader's own bookkeeping: the
// report must agree with what the visitor saw and with the input size.
#include <cstddef>
#include <cstdint>
#include <string>

#include <vector>

#include "formats/chunk_encoder.h"
#include "formats/reader.h"
#include "formats/record_kinds.h"

namespace {

using namespace proflaunch::format;

[[noreturn]] void invariant_broken() { __builtin_trap(); }

class TouchingVisitor : public RecordVisitor {
 public:
  void on_record(const RecordView& record) override {
    ++records;
    // Kinds that grew may come in their older, shorter form: the reader's
    // promise is the minimum, not today's size.
    const auto minimum = minimum_record_bytes(record.kind);
    if (!minimum || record.bytes < *minimum) invariant_broken();
    // Read every byte so the sanitizer sees any out-of-bounds view.
    for (size_t i = 0; i < record.bytes; ++i) checksum += record.data[i];
    if (record.kind == static_cast<uint16_t>(RecordKind::kStringDef)) {
      checksum += record.tail<StringDefRecord>().size();
    }
    if (record.kind == static_cast<uint16_t>(RecordKind::kThreadBatch) &&
        record.as<ThreadBatchRecord>().tid != record.tid)
      invariant_broken();
  }
  uint64_t records = 0;
  uint64_t checksum = 0;
};

void check(const ReadReport& report, const TouchingVisitor& visitor, uint64_t file_bytes) {
  if (report.records != visitor.records) invariant_broken();
  if (report.bytes_skipped > file_bytes) invariant_broken();
  if (report.notes.size() > ReadReport::kMaxNotes) invariant_broken();
  if (report.chunks_corrupt_payload > report.chunks_corrupt) invariant_broken();
  if (report.truncated_tail && report.truncated_tail_offset > file_bytes) invariant_broken();
}

// Inputs starting with this byte are chunk *content*: the fuzzer cannot
// forge CRCs and zstd checksums, so without this mode it would never reach
// the record parsing inside a chunk.
constexpr uint8_t kContentMode = 0xC7;

std::vector<uint8_t> wrap_as_trace(const uint8_t* content, size_t bytes, uint16_t chunk_kind) {
  const FileHeader header = make_file_header();
  std::vector<uint8_t> file(reinterpret_cast<const uint8_t*>(&header),
                            reinterpret_cast<const uint8_t*>(&header) + sizeof header);
  std::vector<uint8_t> chunk(max_encoded_chunk_bytes(bytes));
  static ChunkEncoder encoder;
  const size_t encoded = encoder.encode(static_cast<ChunkKind>(chunk_kind), 42, content, bytes,
                                        chunk.data(), chunk.size());
  file.insert(file.end(), chunk.begin(), chunk.begin() + static_cast<long>(encoded));
  return file;
}

int run_one(const uint8_t* data, size_t size);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == kContentMode) {
    const uint16_t chunk_kind = 1 + data[1] % 2;
    const std::vector<uint8_t> file = wrap_as_trace(data + 2, size - 2, chunk_kind);
    return run_one(file.data(), file.size());
  }
  return run_one(data, size);
}

namespace {

int run_one(const uint8_t* data, size_t size) {
  std::string error;
  // Small limits keep each input fast; the logic is the same as for 64 MiB.
  const ReaderLimits limits{.max_payload_bytes = 1 << 20, .max_content_bytes = 4 << 20};
  auto reader = TraceReader::open(make_memory_source(data, size, "fuzz"), &error, limits);
  if (!reader) {
    if (error.empty()) invariant_broken();
    return 0;
  }
  TouchingVisitor all;
  const ReadReport full = reader->read(all, ChunkSelection::kAll);
  check(full, all, size);

  TouchingVisitor definitions, events;
  const ReadReport first = reader->read(definitions, ChunkSelection::kDefinitionsOnly);
  const ReadReport second = reader->read(events, ChunkSelection::kEventsOnly);
  check(first, definitions, size);
  check(second, events, size);
  // A full pass decodes every chunk the two partial passes decode together.
  if (first.chunks_ok + second.chunks_ok != full.chunks_ok &&
      full.chunks_corrupt == 0 && first.chunks_corrupt == 0 && second.chunks_corrupt == 0)
    invariant_broken();
  const ReadReport both = combine_passes(first, second);
  (void)summarize(both);
  return 0;
}

}  // namespace
