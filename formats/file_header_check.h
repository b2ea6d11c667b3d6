// Validation of the FileHeader: what a reader accepts, and the messages it
// gives when it does not (each names the file and both format versions where
// versions are the problem).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "formats/records.h"

namespace proflaunch::format {

// Largest header_bytes accepted: a later version may append fields, but a
// header this large is more likely corruption.
inline constexpr uint32_t kMaxFileHeaderBytes = 4096;

// Reads and checks the header at the start of a file of `file_bytes` bytes,
// of which `available` bytes are at `data`. Returns the header, or nullopt
// with `error` set to one line: "<name>: <what is wrong>".
std::optional<FileHeader> check_file_header(const uint8_t* data, size_t available,
                                            uint64_t file_bytes, const std::string& name,
                                            std::string* error);

// True when `data` (at least sizeof(FileHeader) bytes) is a header this
// reader accepts. Used between chunks, where part files were concatenated.
bool is_acceptable_file_header(const uint8_t* data, size_t available);

}  // namespace proflaunch::format
