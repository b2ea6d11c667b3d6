// Random-access input for the trace reader: a file read with pread(2) into a
// reusable buffer, or bytes already in memory (tests, the fuzzer). The reader
// never holds more than one chunk (plus a scan window) of the file at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace proflaunch::format {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Returns a pointer to `bytes` bytes at `offset`, valid until the next call
  // that passes the same `scratch`, or nullptr when they cannot be read
  // (offset + bytes beyond the end, I/O error). `scratch` is only used by
  // sources that copy.
  virtual const uint8_t* view(uint64_t offset, size_t bytes, std::vector<uint8_t>& scratch) = 0;
  // For messages: the file name, or a label for in-memory input.
  virtual const std::string& name() const = 0;
};

// Opens `path` for reading. On failure returns nullptr and sets `error` to a
// message that names the file and the reason (missing, a directory, unreadable).
std::unique_ptr<ByteSource> open_file_source(const std::string& path, std::string* error);

// Does not copy: `data` must outlive the source.
std::unique_ptr<ByteSource> make_memory_source(const void* data, size_t bytes,
                                               std::string name = "<memory>");

}  // namespace proflaunch::format
