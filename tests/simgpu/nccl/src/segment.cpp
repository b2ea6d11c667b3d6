#include "segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace simnccl {
namespace {

constexpr int64_t kPollNs = 100'000'000;  // how often a waiter looks at its peers
constexpr size_t kMailboxStride = sizeof(Mailbox) + kMailboxBytes;

size_t slots_offset() { return (sizeof(SegmentHeader) + 4095) & ~size_t{4095}; }
size_t mailboxes_offset(int nranks) { return slots_offset() + size_t(nranks) * kSlotBytes; }
size_t segment_bytes(int nranks) { return mailboxes_offset(nranks) + size_t(nranks) * nranks * kMailboxStride; }

// Shared futexes (no FUTEX_PRIVATE_FLAG): the word lives in memory that
// several processes map.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, int64_t timeout_ns) {
  timespec timeout{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// A process that exited but was not reaped yet still answers kill(pid, 0):
// read its state instead.
bool process_alive(int32_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) return false;
  char text[512] = {};
  const size_t n = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  const char* paren = static_cast<const char*>(memrchr(text, ')', n));
  if (paren == nullptr || paren + 2 >= text + n) return true;
  const char state = paren[2];
  return state != 'Z' && state != 'X';
}

}  // namespace

int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

int64_t collective_timeout_ns() {
  static const int64_t timeout = [] {
    const char* text = std::getenv("SIMNCCL_TIMEOUT_MS");
    char* end = nullptr;
    const long long ms = text != nullptr ? std::strtoll(text, &end, 10) : 0;
    return (text != nullptr && *end == '\0' && ms > 0) ? int64_t(ms) * 1'000'000 : int64_t{30'000} * 1'000'000;
  }();
  return timeout;
}

Segment* Segment::open(const std::string& name, int nranks, std::string& error) {
  if (nranks < 1 || nranks > kMaxRanks) {
    error = "nranks " + std::to_string(nranks) + " is outside 1.." + std::to_string(kMaxRanks);
    return nullptr;
  }
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    error = "shm_open(" + name + ") failed: " + std::strerror(errno);
    return nullptr;
  }
  const size_t bytes = segment_bytes(nranks);
  // Every rank sets the same size; the pages are committed lazily.
  if (ftruncate(fd, off_t(bytes)) != 0) {
    error = "ftruncate of the shared segment failed: " + std::string(std::strerror(errno));
    close(fd);
    return nullptr;
  }
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    error = "mmap of the shared segment failed: " + std::string(std::strerror(errno));
    return nullptr;
  }
  auto* segment = new Segment;
  segment->header_ = static_cast<SegmentHeader*>(memory);
  segment->bytes_ = bytes;
  segment->nranks_ = nranks;
  segment->name_ = name;
  int32_t expected = 0;
  if (!segment->header_->nranks.compare_exchange_strong(expected, nranks) && expected != nranks) {
    error = "ranks disagree on nranks (" + std::to_string(expected) + " and " + std::to_string(nranks) + ")";
    delete segment;
    return nullptr;
  }
  return segment;
}

Segment* Segment::create_private(int nranks, std::string& error) {
  if (nranks < 1 || nranks > kMaxRanks) {
    error = "ndev " + std::to_string(nranks) + " is outside 1.." + std::to_string(kMaxRanks);
    return nullptr;
  }
  const size_t bytes = segment_bytes(nranks);
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    error = "mmap of the communicator memory failed";
    return nullptr;
  }
  auto* segment = new Segment;
  segment->header_ = static_cast<SegmentHeader*>(memory);
  segment->bytes_ = bytes;
  segment->nranks_ = nranks;
  segment->header_->nranks.store(nranks);
  return segment;
}

Segment::~Segment() {
  if (header_ != nullptr) munmap(header_, bytes_);
}

char* Segment::slot(int rank) const {
  return reinterpret_cast<char*>(header_) + slots_offset() + size_t(rank) * kSlotBytes;
}

Mailbox& Segment::mailbox(int from, int to) const {
  char* base = reinterpret_cast<char*>(header_) + mailboxes_offset(nranks_);
  return *reinterpret_cast<Mailbox*>(base + (size_t(from) * nranks_ + to) * kMailboxStride);
}

char* Segment::mailbox_data(int from, int to) const {
  return reinterpret_cast<char*>(&mailbox(from, to)) + sizeof(Mailbox);
}

void Segment::unlink_name() {
  if (!name_.empty()) shm_unlink(name_.c_str());
  name_.clear();
}

void Segment::abort() {
  header_->aborted.store(1, std::memory_order_release);
  // Wake everyone who might be waiting, on every futex word.
  header_->generation.fetch_add(0x10000, std::memory_order_acq_rel);
  futex_wake_all(header_->generation);
  for (int r = 0; r < nranks_; ++r) {
    header_->doorbell[r].fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(header_->doorbell[r]);
  }
}

ncclResult_t Segment::check_peers(int rank, int64_t deadline_ns, std::string& error, uint64_t peer_mask) {
  if (aborted()) {
    error = "a peer aborted the communicator (it timed out, lost a peer, or called ncclCommAbort)";
    return ncclRemoteError;
  }
  const int32_t me = getpid();
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank || (peer_mask >> r & 1) == 0) continue;
    const int32_t pid = header_->pids[r].load(std::memory_order_acquire);
    if (pid != 0 && pid != me && !process_alive(pid)) {
      error = "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") died";
      abort();
      return ncclRemoteError;
    }
  }
  if (monotonic_ns() >= deadline_ns) {
    error = "timed out after " + std::to_string(collective_timeout_ns() / 1'000'000) +
            " ms waiting for the other ranks (SIMNCCL_TIMEOUT_MS)";
    abort();
    return ncclSystemError;
  }
  return ncclSuccess;
}

ncclResult_t Segment::barrier(int rank, int64_t timeout_ns, std::string& error) {
  SegmentHeader& h = *header_;
  if (aborted()) return check_peers(rank, INT64_MAX, error);
  const uint32_t generation = h.generation.load(std::memory_order_acquire);
  if (h.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == uint32_t(nranks_)) {
    h.arrived.store(0, std::memory_order_relaxed);
    h.last_arrival_ns.store(monotonic_ns(), std::memory_order_relaxed);
    h.generation.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(h.generation);
    return ncclSuccess;
  }
  const int64_t deadline = monotonic_ns() + timeout_ns;
  while (h.generation.load(std::memory_order_acquire) == generation) {
    if (ncclResult_t result = check_peers(rank, deadline, error); result != ncclSuccess) {
      // The others may have arrived, finished and exited between the loop's
      // test and the check (a descheduled waiter): then this barrier did
      // succeed, and the dead peer is the next operation's problem.
      if (((h.generation.load(std::memory_order_acquire) - generation) & 0xFFFFu) != 0) return ncclSuccess;
      return result;
    }
    futex_wait(h.generation, generation, std::min(kPollNs, std::max<int64_t>(deadline - monotonic_ns(), 1)));
  }
  // The last arrival adds 1, abort() adds 0x10000: if the low half moved,
  // everyone arrived and this barrier succeeded, even when a peer aborted
  // afterwards (a rank already in the next operation found a dead peer
  // before this one woke up). Only a barrier that abort() ended fails.
  const uint32_t moved = h.generation.load(std::memory_order_acquire) - generation;
  if ((moved & 0xFFFFu) == 0 && aborted()) return check_peers(rank, INT64_MAX, error);
  return ncclSuccess;
}

void Segment::ring(int rank) {
  header_->doorbell[rank].fetch_add(1, std::memory_order_acq_rel);
  futex_wake_all(header_->doorbell[rank]);
}

ncclResult_t Segment::wait_doorbell(int rank, uint32_t seen, int64_t deadline_ns, uint64_t peer_mask,
                                    std::string& error) {
  if (ncclResult_t result = check_peers(rank, deadline_ns, error, peer_mask); result != ncclSuccess) return result;
  futex_wait(header_->doorbell[rank], seen,
             std::min(kPollNs, std::max<int64_t>(deadline_ns - monotonic_ns(), 1)));
  return ncclSuccess;
}

}  // namespace simnccl
