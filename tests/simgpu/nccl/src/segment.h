// The shared-memory segment where the ranks of one communicator meet. Ranks
// are separate processes (threads for ncclCommInitAll); the segment is named
// after the unique id, mapped by every rank, and unlinked as soon as every
// rank has mapped it, so a crash never leaves it behind.
//
// Layout: a header (barrier, liveness, split table), one staging slot per
// rank for collectives, and one mailbox per ordered pair of ranks for
// point-to-point transfers. Waits use futexes on the shared words with a
// deadline, and look at the peers' pids while they wait: a rank whose peer
// died or never came fails with an error instead of hanging (NCCL's
// watchdog behaviour).
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace simnccl {

inline constexpr int kMaxRanks = 64;
inline constexpr size_t kSlotBytes = size_t{1} << 20;      // per rank, per collective step
inline constexpr size_t kMailboxBytes = size_t{256} << 10;  // per ordered pair of ranks

struct SplitEntry {
  int32_t color;
  int32_t key;
};

struct Mailbox {
  std::atomic<uint32_t> full;  // 0: empty (the sender may fill it), 1: full
  uint32_t reserved;
  uint64_t bytes;
  // kMailboxBytes of data follow.
};

struct SegmentHeader {
  std::atomic<int32_t> nranks;      // set by the first rank, checked by the others
  std::atomic<uint32_t> aborted;    // a rank gave up (timeout, dead peer, abort)
  std::atomic<uint32_t> arrived;    // barrier
  std::atomic<uint32_t> generation; // barrier; futex word
  std::atomic<int64_t> last_arrival_ns;  // CLOCK_MONOTONIC when the last barrier completed
  std::atomic<uint32_t> doorbell[kMaxRanks];  // futex word per rank: a mailbox changed
  std::atomic<int32_t> pids[kMaxRanks];
  SplitEntry split[kMaxRanks];
};

class Segment {
 public:
  // Opens (creating if needed) the segment named `name` for `nranks` ranks and
  // maps it. Null with `error` set on failure.
  static Segment* open(const std::string& name, int nranks, std::string& error);
  // A private segment for ranks that are threads of this process (InitAll).
  static Segment* create_private(int nranks, std::string& error);
  ~Segment();

  SegmentHeader& header() const { return *header_; }
  int nranks() const { return nranks_; }
  char* slot(int rank) const;
  Mailbox& mailbox(int from, int to) const;
  char* mailbox_data(int from, int to) const;

  // Removes the name (every rank has mapped it by then).
  void unlink_name();

  // Waits until all ranks arrived. On success `last_arrival_ns` holds when
  // the last one came. ncclRemoteError when a peer died or gave up,
  // ncclSystemError on timeout (the segment is then marked aborted).
  ncclResult_t barrier(int rank, int64_t timeout_ns, std::string& error);

  // Wakes `rank`'s progress loop (a mailbox it uses changed).
  void ring(int rank);
  // Sleeps until `rank`'s doorbell differs from `seen` or ~100 ms passed;
  // fails as barrier() does when peers died or the deadline passed.
  // Only the ranks in `peer_mask` (bit r = rank r) are checked for death: a
  // rank that finished its part and exited breaks nothing it is not part of.
  ncclResult_t wait_doorbell(int rank, uint32_t seen, int64_t deadline_ns, uint64_t peer_mask, std::string& error);

  void abort();
  bool aborted() const { return header_->aborted.load(std::memory_order_acquire) != 0; }

 private:
  Segment() = default;
  ncclResult_t check_peers(int rank, int64_t deadline_ns, std::string& error, uint64_t peer_mask = ~uint64_t{0});

  SegmentHeader* header_ = nullptr;
  size_t bytes_ = 0;
  int nranks_ = 0;
  std::string name_;
};

// The configurable watchdog: SIMNCCL_TIMEOUT_MS (default 30000).
int64_t collective_timeout_ns();

int64_t monotonic_ns();

}  // namespace simnccl
