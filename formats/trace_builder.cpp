#include "formats/trace_builder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "formats/device_info.h"

namespace proflaunch::format {

TraceBuilder::TraceBuilder() : TraceBuilder(Options{}) {}

TraceBuilder::TraceBuilder(Options options) : TraceBuilder(options, nullptr) {}

TraceBuilder::TraceBuilder(Options options, std::FILE* sink)
    : options_(options), sink_(sink), encoder_(std::make_unique<ChunkEncoder>(options.zstd_level)) {
  ok_ = encoder_->ok();
  if (options_.file_header) {
    const FileHeader header = make_file_header();
    emit(reinterpret_cast<const uint8_t*>(&header), sizeof header);
  }
}

void TraceBuilder::process(uint64_t section, const ProcessSpec& spec) {
  // ProcessInfo comes first in the section; its strings follow it, so their
  // ids are reserved before it is written.
  auto reserve = [&](std::string_view text) -> uint32_t {
    SectionState& state = sections_[section];
    auto found = state.string_ids.find(std::string(text));
    if (found != state.string_ids.end()) return found->second;
    const uint32_t id = state.next_string_id++;
    state.string_ids.emplace(std::string(text), id);
    return id;
  };
  std::string command_line;
  for (size_t i = 0; i < spec.argv.size(); ++i) {
    if (i > 0) command_line.push_back('\0');
    command_line += spec.argv[i];
  }
  const std::string executable =
      !spec.executable.empty() ? spec.executable : (spec.argv.empty() ? "" : spec.argv[0]);

  ProcessInfoRecord info{};
  info.pid = spec.pid;
  info.ppid = spec.ppid;
  info.rank = spec.rank;
  info.local_rank = spec.local_rank;
  info.world_size = spec.world_size;
  info.flags = spec.flags;
  info.monotonic_ns = spec.monotonic_ns;
  info.realtime_ns = spec.realtime_ns;
  info.boottime_ns = spec.boottime_ns;
  info.parent_section_id = spec.parent_section_id;
  // Deduplicated ids may already be written; only new ones need StringDefs.
  const uint32_t first_new = sections_[section].next_string_id;
  info.host_string = reserve(spec.host);
  info.command_line_string = reserve(command_line);
  info.executable_string = reserve(executable);
  info.tool_version_string = reserve(spec.tool_version);
  define(section, info);
  const std::pair<uint32_t, const std::string*> strings[] = {
      {info.host_string, &spec.host},
      {info.command_line_string, &command_line},
      {info.executable_string, &executable},
      {info.tool_version_string, &spec.tool_version},
  };
  uint32_t written_up_to = first_new;  // ids are reserved in increasing order
  for (const auto& [id, text] : strings) {
    if (id >= written_up_to) {
      write_string(section, id, *text);
      written_up_to = id + 1;
    }
  }
}

uint32_t TraceBuilder::string(uint64_t section, std::string_view text) {
  SectionState& state = sections_[section];
  auto found = state.string_ids.find(std::string(text));
  if (found != state.string_ids.end()) return found->second;
  const uint32_t id = state.next_string_id++;
  state.string_ids.emplace(std::string(text), id);
  write_string(section, id, text);
  return id;
}

void TraceBuilder::write_string(uint64_t section, uint32_t id, std::string_view text) {
  const size_t text_bytes = std::min(text.size(), kMaxStringBytes);
  std::vector<uint8_t> record(sizeof(StringDefRecord) + text_bytes);
  StringDefRecord fixed{};
  fixed.header.kind = static_cast<uint16_t>(RecordKind::kStringDef);
  fixed.header.bytes = static_cast<uint16_t>(record.size());
  fixed.id = id;
  std::memcpy(record.data(), &fixed, sizeof fixed);
  std::memcpy(record.data() + sizeof fixed, text.data(), text_bytes);
  append(section, ChunkKind::kDefinitions, record.data(), record.size());
}

uint16_t TraceBuilder::api(uint64_t section, std::string_view name, ApiDomain domain,
                           Vendor vendor, uint16_t api) {
  SectionState& state = sections_[section];
  if (api == 0) api = state.next_api;
  state.next_api = std::max<uint16_t>(state.next_api, static_cast<uint16_t>(api + 1));
  ApiDefRecord record{};
  record.api = api;
  record.domain = static_cast<uint8_t>(domain);
  record.vendor = static_cast<uint8_t>(vendor);
  record.name_string = string(section, name);
  define(section, record);
  return api;
}

void TraceBuilder::function(uint64_t section, uint64_t handle, std::string_view mangled_name,
                            uint64_t since_ns, const FunctionResources& resources) {
  FunctionDefRecord record{};
  record.name_string = string(section, mangled_name);
  record.handle = handle;
  record.since_ns = since_ns;
  record.registers_per_thread = resources.registers_per_thread;
  record.static_shared_bytes = resources.static_shared_bytes;
  record.max_threads_per_block = resources.max_threads_per_block;
  record.local_bytes_per_thread = resources.local_bytes_per_thread;
  record.attributes_known = resources.known;
  define(section, record);
}

void TraceBuilder::thread(uint64_t section, uint32_t tid, std::string_view name, uint64_t since_ns) {
  ThreadInfoRecord record{};
  record.tid = tid;
  record.name_string = name.empty() ? 0 : string(section, name);
  record.since_ns = since_ns;
  define(section, record);
}

void TraceBuilder::device(uint64_t section, const DeviceSpec& spec) {
  define(section, device_info_record(spec, spec.ordinal, string(section, spec.name)));
}

void TraceBuilder::section_end(uint64_t section, uint64_t end_ns, uint64_t records_written,
                               uint64_t records_dropped) {
  SectionEndRecord record{};
  record.end_ns = end_ns;
  record.records_written = records_written;
  record.records_dropped = records_dropped;
  define(section, record);
}

void TraceBuilder::raw_record(uint64_t section, ChunkKind kind, std::span<const uint8_t> record) {
  append(section, kind, record.data(), record.size());
}

void TraceBuilder::append_bytes(std::span<const uint8_t> bytes) {
  emit(bytes.data(), bytes.size());
}

TraceBuilder::Pending& TraceBuilder::pending(uint64_t section, ChunkKind kind) {
  for (Pending& chunk : pending_)
    if (chunk.section == section && chunk.kind == kind) return chunk;
  pending_.push_back(Pending{section, kind, {}, 0, false, 0});
  pending_.back().content.reserve(std::min<size_t>(options_.chunk_content_bytes, 1 << 20));
  return pending_.back();
}

void TraceBuilder::append(uint64_t section, ChunkKind kind, const void* record, size_t bytes) {
  Pending* chunk = &pending(section, kind);
  if (!chunk->content.empty() && chunk->content.size() + bytes > options_.chunk_content_bytes) {
    encode(*chunk);
  }
  const auto* p = static_cast<const uint8_t*>(record);
  chunk->content.insert(chunk->content.end(), p, p + bytes);
  ++chunk->records;
}

void TraceBuilder::append_event(uint64_t section, uint32_t tid, const void* record, size_t bytes) {
  Pending* chunk = &pending(section, ChunkKind::kEvents);
  const size_t batch_bytes = sizeof(ThreadBatchRecord);
  if (!chunk->content.empty() &&
      chunk->content.size() + bytes + batch_bytes > options_.chunk_content_bytes) {
    encode(*chunk);
  }
  if (!chunk->has_thread || chunk->thread != tid) {
    ThreadBatchRecord batch{};
    batch.header = header_for<ThreadBatchRecord>();
    batch.tid = tid;
    const auto* b = reinterpret_cast<const uint8_t*>(&batch);
    chunk->content.insert(chunk->content.end(), b, b + sizeof batch);
    ++chunk->records;
    chunk->has_thread = true;
    chunk->thread = tid;
  }
  const auto* p = static_cast<const uint8_t*>(record);
  chunk->content.insert(chunk->content.end(), p, p + bytes);
  ++chunk->records;
}

void TraceBuilder::encode(Pending& chunk) {
  if (chunk.content.empty()) return;
  const size_t capacity = max_encoded_chunk_bytes(chunk.content.size());
  if (encode_buffer_.size() < capacity) encode_buffer_.resize(capacity);
  const size_t encoded = encoder_->encode(chunk.kind, chunk.section, chunk.content.data(),
                                         chunk.content.size(), encode_buffer_.data(), capacity);
  if (encoded == 0) {
    ok_ = false;
  } else {
    chunks_.push_back(
        ChunkSpan{out_offset_ + out_.size(), encoded, chunk.kind, chunk.section, chunk.records});
    emit(encode_buffer_.data(), encoded);
  }
  chunk.content.clear();
  chunk.records = 0;
  chunk.has_thread = false;
}

void TraceBuilder::emit(const uint8_t* data, size_t bytes) {
  out_.insert(out_.end(), data, data + bytes);
  if (sink_ != nullptr && out_.size() >= (4u << 20)) {
    if (std::fwrite(out_.data(), 1, out_.size(), sink_) != out_.size()) ok_ = false;
    out_offset_ += out_.size();
    out_.clear();
  }
}

void TraceBuilder::flush(uint64_t section, ChunkKind kind) {
  for (Pending& chunk : pending_)
    if (chunk.section == section && chunk.kind == kind) encode(chunk);
}

void TraceBuilder::flush() {
  for (Pending& chunk : pending_)
    if (chunk.kind == ChunkKind::kDefinitions) encode(chunk);
  for (Pending& chunk : pending_)
    if (chunk.kind != ChunkKind::kDefinitions) encode(chunk);
  if (sink_ != nullptr && !out_.empty()) {
    if (std::fwrite(out_.data(), 1, out_.size(), sink_) != out_.size()) ok_ = false;
    out_offset_ += out_.size();
    out_.clear();
  }
}

const std::vector<uint8_t>& TraceBuilder::bytes() {
  flush();
  return out_;
}

bool TraceBuilder::write_file(const std::string& path, std::string* error) {
  flush();
  if (!ok_) {
    *error = "encoding a chunk failed";
    return false;
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  const bool written = std::fwrite(out_.data(), 1, out_.size(), file) == out_.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    *error = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace proflaunch::format
