#include "formats/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace proflaunch::format {
namespace {

class FileByteSource final : public ByteSource {
 public:
  FileByteSource(int fd, uint64_t size, std::string name)
      : fd_(fd), size_(size), name_(std::move(name)) {}
  ~FileByteSource() override { ::close(fd_); }
  FileByteSource(const FileByteSource&) = delete;
  FileByteSource& operator=(const FileByteSource&) = delete;

  uint64_t size() const override { return size_; }
  const std::string& name() const override { return name_; }

  const uint8_t* view(uint64_t offset, size_t bytes, std::vector<uint8_t>& scratch) override {
    if (offset > size_ || bytes > size_ - offset) return nullptr;
    if (scratch.size() < bytes) scratch.resize(bytes);
    size_t done = 0;
    while (done < bytes) {
      const ssize_t n = ::pread(fd_, scratch.data() + done, bytes - done,
                                static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      // n == 0: the file shrank under us (a part still being written); treat
      // like the end of the file.
      if (n <= 0) return nullptr;
      done += static_cast<size_t>(n);
    }
    return scratch.data();
  }

 private:
  int fd_;
  uint64_t size_;
  std::string name_;
};

class MemoryByteSource final : public ByteSource {
 public:
  MemoryByteSource(const void* data, size_t bytes, std::string name)
      : data_(static_cast<const uint8_t*>(data)), size_(bytes), name_(std::move(name)) {}

  uint64_t size() const override { return size_; }
  const std::string& name() const override { return name_; }

  const uint8_t* view(uint64_t offset, size_t bytes, std::vector<uint8_t>&) override {
    if (offset > size_ || bytes > size_ - offset) return nullptr;
    return data_ + offset;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = path + ": cannot stat: " + std::strerror(errno);
    ::close(fd);
    return nullptr;
  }
  if (S_ISDIR(st.st_mode)) {
    *error = path + ": is a directory, not a trace file";
    ::close(fd);
    return nullptr;
  }
  if (!S_ISREG(st.st_mode)) {
    // The reader needs the size up front and seeks back for the second pass.
    *error = path + ": not a regular file (pipes and devices are not supported; save the trace to a file first)";
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<FileByteSource>(fd, static_cast<uint64_t>(st.st_size), path);
}

std::unique_ptr<ByteSource> make_memory_source(const void* data, size_t bytes, std::string name) {
  return std::make_unique<MemoryByteSource>(data, bytes, std::move(name));
}

}  // namespace proflaunch::format
