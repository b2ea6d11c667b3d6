// One .pftrace output file: a stream of Trace.packet fields, written plain,
// gzipped as a whole (.pftrace.gz), or with the packets compressed inside
// the trace the way Perfetto's own tracing service writes them: runs of
// whole packets, about kBlockBytes at a time, each deflated (zlib format)
// into one TracePacket.compressed_packets (field 50), which every trace
// processor since 2020 expands in place; or zstd-compressed into
// TracePacket.zstd_compressed_packets (field 133), which trace processors
// read only since July 2026 (and only where built with zstd).
//
// Compression runs on a thread of the output's own, blocks queued in order
// (at most kQueuedBlocks), so it overlaps the encoding. Where there is no
// core to spare for that thread (a third busy thread on two cores costs
// more in waiting than it gains: docs/performance.md, figure q), the blocks
// are shared instead: another thread that would otherwise wait compresses
// the oldest waiting block through help(), and the writing thread
// compresses blocks itself once more than kSharedBlocks wait; bundles are
// written in order by whichever thread completes the oldest. A bundle, field
// ids and sizes included, stays under Perfetto's 512 KiB; a block that
// would not (a single huge packet that does not compress) is written as the
// plain packets it holds, which are just as valid.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <zlib.h>

namespace proflaunch::tools::emit {

enum class PacketCompression : uint8_t { kNone, kDeflate, kZstd };

class ProtoOutput {
 public:
  static constexpr size_t kBlockBytes = 256 * 1024;
  static constexpr size_t kMaxBundleBytes = 512 * 1024 - 1;
  static constexpr size_t kQueuedBlocks = 16;
  static constexpr size_t kSharedBlocks = 8;

  // `gzip`: the whole file gzipped (packets then stay uncompressed inside).
  // `compression_thread`: compress on a thread of its own (else shared:
  // in write() and in help()).
  static std::unique_ptr<ProtoOutput> create(const std::string& path, bool gzip, PacketCompression compression,
                                             bool compression_thread, std::string* error);
  ~ProtoOutput();
  ProtoOutput(const ProtoOutput&) = delete;
  ProtoOutput& operator=(const ProtoOutput&) = delete;

  // Appends bytes of the packet stream: whole Trace.packet fields, a
  // packet's bytes possibly spread over several calls, but a packet's tag
  // and length always in one call.
  bool write(std::string_view bytes);
  // Writes what is left and closes the file. False when anything failed.
  bool close();
  // Shared compression: compresses the oldest waiting block, from any one
  // thread other than the writing one at a time; false when none waits.
  bool help();

  // Why the first write failed ("No space left on device").
  std::string error() const;
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // Packet bytes before compression: what the UI loads, what --max-size bounds.
  uint64_t written() const { return written_; }
  // Bytes in the file so far (all of them once closed).
  uint64_t file_bytes() const { return file_bytes_.load(std::memory_order_relaxed); }

 private:
  class Compressor;  // proto_output.cpp

  ProtoOutput() = default;
  void hand_over_block();
  void compress_blocks(PacketCompression kind);  // the compressing thread
  void compress_and_put(Compressor& compressor, std::string_view block);
  // Shared compression (mutex_ held, released while compressing): the
  // oldest waiting block compressed with `compressor`, and every completed
  // block at the front written; false when no block waits.
  bool compress_shared(std::unique_lock<std::mutex>& lock, Compressor& compressor);
  // Compresses and writes every shared block (the writing thread's).
  void drain_shared();
  bool put(std::string_view bytes);
  void spill();
  void fail(const char* why);

  std::FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
  PacketCompression compression_ = PacketCompression::kNone;
  std::string buffer_;  // plain output not yet written
  std::string block_;   // packets for the next bundle
  uint64_t packet_left_ = 0;  // bytes of the current packet still to come
  uint64_t written_ = 0;
  std::atomic<uint64_t> file_bytes_{0};
  std::atomic<bool> failed_{false};

  // Shared compression (no thread): the blocks in order, the writing
  // thread's compressor and the helper's.
  struct SharedBlock {
    enum class State : uint8_t { kWaiting, kCompressing, kDone };
    std::string block;
    std::string bundle;  // kDone: the compressed packet; empty: write `block` plain
    State state = State::kWaiting;
  };
  std::deque<SharedBlock> shared_;  // under mutex_
  size_t shared_waiting_ = 0;
  bool helping_ = false;
  std::unique_ptr<Compressor> writer_compressor_;
  std::unique_ptr<Compressor> helper_compressor_;
  std::thread compressor_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;   // blocks to compress, oldest first
  std::deque<std::string> spare_;   // emptied blocks, for reuse
  bool closing_ = false;
  bool closed_ = false;
  mutable std::mutex error_mutex_;
  std::string error_;
};

}  // namespace proflaunch::tools::emit
