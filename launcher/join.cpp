#include "launcher/join.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "formats/chunk_encoder.h"
#include "formats/file_header_check.h"
#include "formats/records.h"
#include "launcher/parts_dir.h"

namespace proflaunch::launcher {
namespace {

using namespace format;

std::string errno_text(int error) { return std::strerror(error); }

class OutputFile {
 public:
  ~OutputFile() {
    if (fd_ >= 0) close(fd_);
  }
  bool open(const std::string& path, std::string* error) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) *error = "cannot create " + path + ": " + errno_text(errno);
    return fd_ >= 0;
  }
  bool write_all(const void* data, size_t bytes, std::string* error) {
    const auto* cursor = static_cast<const uint8_t*>(data);
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, cursor, bytes);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *error = "cannot write the joined trace: " + errno_text(n < 0 ? errno : ENOSPC);
        return false;
      }
      cursor += n;
      bytes -= static_cast<size_t>(n);
      written_ += static_cast<uint64_t>(n);
    }
    return true;
  }
  bool finish(std::string* error) {
    if (close(fd_) != 0) {
      fd_ = -1;
      *error = "cannot write the joined trace: " + errno_text(errno);
      return false;
    }
    fd_ = -1;
    return true;
  }
  uint64_t written() const { return written_; }

 private:
  int fd_ = -1;
  uint64_t written_ = 0;
};

bool read_exact(int fd, uint64_t offset, void* out, size_t bytes) {
  auto* cursor = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    const ssize_t n = pread(fd, cursor, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    cursor += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// Copies the good chunks of one part. Returns false only when the output
// cannot be written (a damaged part is reported, not an error).
bool copy_part(const std::string& path, const std::string& name, OutputFile& output,
               std::vector<uint8_t>& buffer, PartReport& report, std::string* error) {
  report.part = name;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    report.cut_reason = "cannot open: " + errno_text(errno);
    return true;
  }
  struct stat info {};
  fstat(fd, &info);
  const uint64_t size = static_cast<uint64_t>(info.st_size);

  uint8_t header_bytes[sizeof(FileHeader)];
  std::string header_error;
  if (size < sizeof header_bytes || !read_exact(fd, 0, header_bytes, sizeof header_bytes) ||
      !check_file_header(header_bytes, sizeof header_bytes, size, name, &header_error)) {
    report.bytes_cut = size;
    report.cut_reason = header_error.empty() ? "too short for a file header" : header_error;
    close(fd);
    return true;
  }
  FileHeader header;
  std::memcpy(&header, header_bytes, sizeof header);

  uint64_t offset = header.header_bytes;
  bool ok = true;
  while (offset < size) {
    ChunkHeader chunk;
    std::string reason;
    if (size - offset < sizeof chunk) {
      reason = "truncated chunk header";
    } else if (!read_exact(fd, offset, &chunk, sizeof chunk)) {
      reason = "read error";
    } else if (chunk.magic != kChunkMagic ||
               chunk.header_crc32 != crc32(&chunk, offsetof(ChunkHeader, header_crc32))) {
      reason = "bad chunk header";
    } else if (chunk.payload_bytes > kMaxChunkPayloadBytes) {
      reason = "chunk larger than the format allows";
    } else if (size - offset - sizeof chunk < chunk.payload_bytes) {
      reason = "truncated chunk";
    }
    if (!reason.empty()) {
      report.cut_offset = offset;
      report.bytes_cut = size - offset;
      report.cut_reason = reason;
      break;
    }
    const size_t total = sizeof chunk + chunk.payload_bytes;
    buffer.resize(total);
    if (!read_exact(fd, offset, buffer.data(), total)) {
      report.cut_offset = offset;
      report.bytes_cut = size - offset;
      report.cut_reason = "read error";
      break;
    }
    if (!output.write_all(buffer.data(), total, error)) {
      ok = false;
      break;
    }
    ++report.chunks;
    offset += total;
  }
  close(fd);
  return ok;
}

// rename(2), but without replacing a file that appeared since the check
// above unless asked to (another run, or the user, wrote it meanwhile).
bool move_into_place(const std::string& from, const std::string& to, bool replace, std::string* error) {
  int result = replace ? rename(from.c_str(), to.c_str())
                       : renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  if (result != 0 && !replace && (errno == EINVAL || errno == ENOSYS)) {
    // A file system without RENAME_NOREPLACE: link(2) does not replace either.
    result = link(from.c_str(), to.c_str());
    if (result == 0) unlink(from.c_str());
  }
  if (result == 0) return true;
  *error = errno == EEXIST ? to + " appeared while joining (use --force to replace it)"
                           : "cannot rename " + from + " to " + to + ": " + errno_text(errno);
  return false;
}

JoinResult join_names(const std::string& parts_dir, const std::vector<std::string>& names,
                      const std::string& output_path, bool replace_existing) {
  JoinResult result;
  struct stat info {};
  if (!replace_existing && lstat(output_path.c_str(), &info) == 0) {
    result.error = output_path + " already exists (use --force to replace it)";
    return result;
  }
  const std::string temporary = output_path + ".joining-" + std::to_string(getpid());
  OutputFile output;
  if (!output.open(temporary, &result.error)) return result;
  const FileHeader header = make_file_header();
  std::vector<uint8_t> buffer;
  bool ok = output.write_all(&header, sizeof header, &result.error);
  for (const std::string& name : names) {
    if (!ok) break;
    PartReport report;
    ok = copy_part(parts_dir + "/" + name, name, output, buffer, report, &result.error);
    result.parts.push_back(report);
  }
  ok = ok && output.finish(&result.error);
  if (ok && !move_into_place(temporary, output_path, replace_existing, &result.error)) ok = false;
  if (!ok) {
    unlink(temporary.c_str());
    return result;
  }
  result.output_bytes = output.written();
  result.ok = true;
  return result;
}

}  // namespace

JoinResult join_parts(const std::string& parts_dir, const std::string& output_path,
                      bool replace_existing, bool keep_parts) {
  JoinResult result;
  const std::vector<std::string> names = part_names(parts_dir, &result.error);
  if (!result.error.empty()) return result;
  result = join_names(parts_dir, names, output_path, replace_existing);
  if (!result.ok || keep_parts) return result;  // the parts stay, for another --join
  for (const std::string& name : names) unlink((parts_dir + "/" + name).c_str());
  unlink((parts_dir + "/control").c_str());  // the control page of an interrupted run
  unlink((parts_dir + "/" + kLockName).c_str());
  rmdir(parts_dir.c_str());  // fails, harmlessly, if something else is in there
  return result;
}

JoinResult copy_parts_of(const std::string& parts_dir, const std::vector<uint32_t>& pids,
                         const std::string& output_path, bool replace_existing) {
  JoinResult result;
  std::vector<std::string> names = part_names(parts_dir, &result.error);
  if (!result.error.empty()) return result;
  std::vector<std::string> selected;
  for (const std::string& name : names)
    for (uint32_t pid : pids)
      if (name.rfind(std::to_string(pid) + "-", 0) == 0) selected.push_back(name);
  return join_names(parts_dir, selected, output_path, replace_existing);
}

}  // namespace proflaunch::launcher
