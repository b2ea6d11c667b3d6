#include "preload/writer/section_output.h"

#include "preload/record/definitions.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/process_info.h"

namespace proflaunch {

using format::ChunkKind;

bool SectionOutput::init(const SectionIdentity& section) noexcept {
  section_ = section;
  return encoder_.init(kChunkContentBytes);
}

void SectionOutput::begin(const SectionIdentity& section) noexcept {
  section_ = section;
  totals_ = {};
  unwritten_definitions_.clear();
  file_.reset();
}

bool SectionOutput::ensure_open() noexcept {
  if (file_.failed()) return false;
  if (file_.exists()) return true;
  return create(/*with_pending_definitions=*/true);
}

bool SectionOutput::create(bool with_pending_definitions) noexcept {
  const Config& config = runtime::config();
  if (!file_.create(config.parts_dir, section_.pid, section_.id)) return false;
  const format::ProcessInfoRecord info = build_process_info(section_, config);
  try {
    unwritten_definitions_.assign(reinterpret_cast<const uint8_t*>(&info),
                                  reinterpret_cast<const uint8_t*>(&info) + sizeof info);
  } catch (...) {
    file_.mark_failed("out of memory for");
    return false;
  }
  if (with_pending_definitions && !take_pending_definitions(unwritten_definitions_)) {
    file_.mark_failed("out of memory for");
    return false;
  }
  return write_unwritten_definitions();
}

bool SectionOutput::write_pending_definitions() noexcept {
  if (!take_pending_definitions(unwritten_definitions_)) {
    file_.mark_failed("out of memory for");
    return false;
  }
  return write_unwritten_definitions();
}

bool SectionOutput::write_unwritten_definitions() noexcept {
  size_t written = 0;
  const bool ok = write_definitions(unwritten_definitions_, 0, &written);
  unwritten_definitions_.erase(unwritten_definitions_.begin(),
                               unwritten_definitions_.begin() + static_cast<ptrdiff_t>(written));
  return ok;
}

bool SectionOutput::write_definitions(const std::vector<uint8_t>& content, size_t from, size_t* written) noexcept {
  size_t offset = from;
  while (offset < content.size()) {
    const size_t piece = whole_records_prefix(content.data() + offset, content.size() - offset, kChunkContentBytes);
    if (piece == 0) break;  // malformed tail: never produced by definitions.cpp
    if (!write_chunk(ChunkKind::kDefinitions, content.data() + offset, piece)) return false;
    offset += piece;
    if (written != nullptr) *written = offset - from;
  }
  return true;
}

bool SectionOutput::write_chunk(ChunkKind kind, const void* content, size_t bytes) noexcept {
  const size_t encoded = encoder_.encode(kind, section_.id, content, bytes);
  if (encoded == 0) {
    file_.mark_failed("cannot compress a chunk for");
    return false;
  }
  return file_.append(encoder_.data(), encoded);
}

}  // namespace proflaunch
