#include "formats/file_header_check.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace proflaunch::format {
namespace {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

// A hint for files people commonly pass by mistake.
std::string guess_what_it_is(const uint8_t* data, size_t available) {
  size_t i = 0;
  while (i < available && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
    ++i;
  if (i < available && (data[i] == '{' || data[i] == '['))
    return " (it looks like JSON: proftrace reads the .trace files that proflaunch writes)";
  static constexpr uint8_t kZstd[4] = {0x28, 0xB5, 0x2F, 0xFD};
  if (available >= 4 && std::memcmp(data, kZstd, 4) == 0) return " (it is a plain zstd file)";
  static constexpr uint8_t kGzip[2] = {0x1F, 0x8B};
  if (available >= 2 && std::memcmp(data, kGzip, 2) == 0) return " (it is a gzip file)";
  return "";
}

}  // namespace

std::optional<FileHeader> check_file_header(const uint8_t* data, size_t available,
                                            uint64_t file_bytes, const std::string& name,
                                            std::string* error) {
  if (file_bytes == 0) {
    *error = name + ": the file is empty, not a proflaunch trace";
    return std::nullopt;
  }
  const size_t magic_bytes = sizeof(kFileMagic);
  const size_t compared = available < magic_bytes ? available : magic_bytes;
  if (std::memcmp(data, kFileMagic, compared) != 0) {
    *error = name + ": not a proflaunch trace (the file does not start with the PROFLNCH magic)" +
             guess_what_it_is(data, available);
    return std::nullopt;
  }
  if (available < sizeof(FileHeader)) {
    *error = name + ": truncated: the file ends inside its " + std::to_string(sizeof(FileHeader)) +
             "-byte header (" + std::to_string(file_bytes) + " bytes)";
    return std::nullopt;
  }
  FileHeader header;
  std::memcpy(&header, data, sizeof header);
  if (header.format_version == 0) {
    *error = name + ": corrupt file header: format version 0";
    return std::nullopt;
  }
  if (header.format_version > kFormatVersion) {
    *error = name + ": written in trace format version " + std::to_string(header.format_version) +
             ", but this proftrace reads format version " + std::to_string(kFormatVersion) +
             " at most; use a newer proftrace";
    return std::nullopt;
  }
  const uint64_t unknown_required = header.required_features & ~kKnownRequiredFeatures;
  if (unknown_required != 0) {
    *error = name + ": needs format features " + hex(unknown_required) +
             " that this proftrace does not know (file format version " +
             std::to_string(header.format_version) + ", reader format version " +
             std::to_string(kFormatVersion) + " knows required features " +
             hex(kKnownRequiredFeatures) + "); use a newer proftrace";
    return std::nullopt;
  }
  if (header.header_bytes < sizeof(FileHeader) || header.header_bytes > kMaxFileHeaderBytes) {
    *error = name + ": corrupt file header: header size " + std::to_string(header.header_bytes) +
             " bytes";
    return std::nullopt;
  }
  if (header.header_bytes > file_bytes) {
    *error = name + ": truncated: the file ends inside its header";
    return std::nullopt;
  }
  return header;
}

bool is_acceptable_file_header(const uint8_t* data, size_t available) {
  if (available < sizeof(FileHeader) || std::memcmp(data, kFileMagic, sizeof kFileMagic) != 0)
    return false;
  FileHeader header;
  std::memcpy(&header, data, sizeof header);
  return header.format_version != 0 && header.format_version <= kFormatVersion &&
         (header.required_features & ~kKnownRequiredFeatures) == 0 &&
         header.header_bytes >= sizeof(FileHeader) && header.header_bytes <= kMaxFileHeaderBytes;
}

}  // namespace proflaunch::format
