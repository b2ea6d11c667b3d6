#include "tools/proftrace/emit/proto_output.h"

#include <isa-l/igzip_lib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>
#include <vector>

#include "tools/proftrace/emit/proto_wire.h"

namespace proflaunch::tools::emit {
namespace {

constexpr size_t kPlainBuffer = 1 << 20;
constexpr uint8_t kPacketTag = 1 << 3 | 2;  // Trace.packet, length-delimited
constexpr uint32_t kCompressedPackets = 50;
constexpr uint32_t kZstdCompressedPackets = 133;
// ISA-L's igzip at level 0: 6.3x on these packets at ~1.8 GB/s, where
// libdeflate's fastest level makes 7.8x at ~0.85 GB/s (docs/performance.md, "Why q").
// Not levels 1 to 3 (7.7-8.2x): in ISA-L 2.30 their output for the same
// block now and then differs between calls in one process (valid, but the
// same trace would not always convert to the same bytes); level 0's does not.
constexpr int kDeflateLevel = 0;
// zstd's first fast level: ~15 % faster than level 1 on these packets, at
// 11x instead of 11.8x.
constexpr int kZstdLevel = -1;

}  // namespace

// Compresses a block into the body of one bundle packet.
class ProtoOutput::Compressor {
 public:
  explicit Compressor(PacketCompression kind) : kind_(kind) {
    if (kind_ == PacketCompression::kDeflate) {
      deflate_stream_ = std::make_unique<isal_zstream>();
    } else {
      zstd_ = ZSTD_createCCtx();
    }
  }
  ~Compressor() {
    if (zstd_ != nullptr) ZSTD_freeCCtx(zstd_);
  }

  // The block as one Trace.packet field holding a compressed bundle; empty
  // when it cannot be (no compressor, or the bundle would pass the limit).
  std::string_view bundle(std::string_view block) {
    const size_t bound =
        kind_ == PacketCompression::kDeflate ? deflate_bound(block.size()) : ZSTD_compressBound(block.size());
    if (kind_ == PacketCompression::kZstd && zstd_ == nullptr) return {};
    constexpr size_t kHeader = 1 + 5 + 2 + 5;  // packet tag and length, field tag and length
    out_.resize(kHeader + bound);
    uint8_t* body = out_.data() + kHeader;
    size_t compressed = 0;
    if (kind_ == PacketCompression::kDeflate) {
      compressed = deflate(block, body, bound);
    } else {
      compressed = ZSTD_compressCCtx(zstd_, body, bound, block.data(), block.size(), kZstdLevel);
      if (ZSTD_isError(compressed)) compressed = 0;
    }
    if (compressed == 0) return {};
    const uint32_t field = kind_ == PacketCompression::kDeflate ? kCompressedPackets : kZstdCompressedPackets;
    const uint64_t field_key = uint64_t{field} << 3 | 2;
    const uint64_t packet_bytes = varint_size(field_key) + varint_size(compressed) + compressed;
    const uint64_t total = 1 + varint_size(packet_bytes) + packet_bytes;
    if (total > ProtoOutput::kMaxBundleBytes) return {};
    // The header right before the body, so the packet is one run of bytes.
    char header[kHeader];
    char* end = header;
    *end++ = static_cast<char>(kPacketTag);
    end = put_varint(end, packet_bytes);
    end = put_varint(end, field_key);
    end = put_varint(end, compressed);
    const size_t n = static_cast<size_t>(end - header);
    uint8_t* start = body - n;
    std::memcpy(start, header, n);
    return {reinterpret_cast<const char*>(start), n + compressed};
  }

 private:
  // At worst igzip stores the input: 5 bytes per stored block of up to
  // 64 KiB, and the zlib header and trailer.
  static size_t deflate_bound(size_t bytes) { return bytes + 5 * (bytes / 65535 + 1) + 2 + 4 + 64; }

  // `block` in zlib format at `out`; 0 when it does not fit `capacity`.
  size_t deflate(std::string_view block, uint8_t* out, size_t capacity) {
    if (capacity > UINT32_MAX) return 0;  // igzip counts in 32 bits; no bundle is that big
    // Every field cleared, not only those isal_deflate_stateless_init sets:
    // ISA-L 2.30's leaves hist_bits (the window) as it finds it, and a stream
    // with stale or stack contents compresses differently from run to run.
    isal_zstream& stream = *deflate_stream_;
    std::memset(&stream, 0, sizeof stream);
    isal_deflate_stateless_init(&stream);
    stream.hist_bits = 0;  // the default: the whole 32 KiB window
    stream.level = kDeflateLevel;  // level 0 keeps its hash table in the stream
    stream.gzip_flag = IGZIP_ZLIB;
    stream.end_of_stream = 1;
    stream.flush = NO_FLUSH;
    stream.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(block.data()));
    stream.avail_in = static_cast<uint32_t>(block.size());
    stream.next_out = out;
    stream.avail_out = static_cast<uint32_t>(capacity);
    if (isal_deflate_stateless(&stream) != COMP_OK) return 0;
    return stream.total_out;
  }

  PacketCompression kind_;
  std::unique_ptr<isal_zstream> deflate_stream_;  // ~80 KiB: not on the stack
  ZSTD_CCtx* zstd_ = nullptr;
  std::vector<uint8_t> out_;
};

std::unique_ptr<ProtoOutput> ProtoOutput::create(const std::string& path, bool gzip, PacketCompression compression,
                                                 bool compression_thread, std::string* error) {
  auto out = std::unique_ptr<ProtoOutput>(new ProtoOutput);
  if (gzip) {
    out->gz_ = gzopen(path.c_str(), "wb6");
    if (out->gz_ == nullptr) {
      *error = path + ": cannot create the output: " + std::strerror(errno != 0 ? errno : ENOMEM);
      return nullptr;
    }
    gzbuffer(out->gz_, 1 << 18);
    compression = PacketCompression::kNone;  // the whole file is compressed
  } else {
    out->file_ = std::fopen(path.c_str(), "wb");
    if (out->file_ == nullptr) {
      *error = path + ": cannot create the output: " + std::strerror(errno);
      return nullptr;
    }
  }
  out->compression_ = compression;
  if (compression == PacketCompression::kNone) {
    out->buffer_.reserve(kPlainBuffer);
  } else {
    out->block_.reserve(kBlockBytes + 4096);
    if (!compression_thread) {
      out->writer_compressor_ = std::make_unique<Compressor>(compression);
      out->helper_compressor_ = std::make_unique<Compressor>(compression);
      return out;
    }
    try {
      out->compressor_ = std::thread([raw = out.get(), compression] { raw->compress_blocks(compression); });
    } catch (const std::system_error&) {
      out->compression_ = PacketCompression::kNone;  // no thread to be had: plain packets
      out->buffer_.reserve(kPlainBuffer);
    }
  }
  return out;
}

ProtoOutput::~ProtoOutput() { close(); }

bool ProtoOutput::write(std::string_view bytes) {
  written_ += bytes.size();
  if (compression_ == PacketCompression::kNone) {
    if (buffer_.size() + bytes.size() > kPlainBuffer) spill();
    if (bytes.size() > kPlainBuffer) return put(bytes);
    buffer_.append(bytes);
    return !failed();
  }
  // Blocks end between packets: follow the packets' framing.
  size_t at = 0;
  while (at < bytes.size()) {
    if (packet_left_ == 0) {
      if (block_.size() >= kBlockBytes) hand_over_block();
      const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + at;
      const size_t available = bytes.size() - at;
      uint64_t length = 0;
      size_t header = 1;
      bool whole = available > 1 && p[0] == kPacketTag;
      for (int shift = 0; whole; shift += 7) {
        if (header == available || shift > 63) {
          whole = false;
          break;
        }
        length |= uint64_t{p[header] & 0x7Fu} << shift;
        if (p[header++] < 0x80) break;
      }
      if (!whole) {
        // Not the framing this class was promised: stop bundling and write
        // the rest as it comes (the packets already queued are whole).
        hand_over_block();
        if (writer_compressor_ != nullptr) {
          drain_shared();
        } else {
          std::unique_lock<std::mutex> lock(mutex_);
          changed_.wait(lock, [&] { return queue_.empty(); });
        }
        compression_ = PacketCompression::kNone;  // only this thread reads it
        buffer_.reserve(kPlainBuffer);
        written_ -= bytes.size() - at;
        return write(bytes.substr(at));
      }
      packet_left_ = header + length;
    }
    const size_t take = static_cast<size_t>(std::min<uint64_t>(packet_left_, bytes.size() - at));
    block_.append(bytes.data() + at, take);
    packet_left_ -= take;
    at += take;
  }
  return !failed();
}

void ProtoOutput::hand_over_block() {
  if (block_.empty()) return;
  std::unique_lock<std::mutex> lock(mutex_);
  if (writer_compressor_ != nullptr) {
    SharedBlock& shared = shared_.emplace_back();
    shared.block.swap(block_);
    ++shared_waiting_;
    if (!spare_.empty()) {
      block_.swap(spare_.back());
      spare_.pop_back();
    }
    block_.clear();
    block_.reserve(kBlockBytes + 4096);
    // The helper takes what it can; past kSharedBlocks this thread does it.
    while (shared_waiting_ > kSharedBlocks && compress_shared(lock, *writer_compressor_)) {
    }
    return;
  }
  changed_.wait(lock, [&] { return queue_.size() < kQueuedBlocks; });
  queue_.push_back(std::move(block_));
  if (!spare_.empty()) {
    block_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    block_ = std::string();
    block_.reserve(kBlockBytes + 4096);
  }
  block_.clear();
  lock.unlock();
  changed_.notify_all();
}

void ProtoOutput::compress_blocks(PacketCompression kind) {
  Compressor compressor(kind);  // this thread's
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || closing_; });
    if (queue_.empty()) return;
    std::string block = std::move(queue_.front());
    lock.unlock();
    compress_and_put(compressor, block);
    lock.lock();
    queue_.pop_front();
    block.clear();
    spare_.push_back(std::move(block));
    changed_.notify_all();
  }
}

bool ProtoOutput::compress_shared(std::unique_lock<std::mutex>& lock, Compressor& compressor) {
  auto oldest = std::find_if(shared_.begin(), shared_.end(),
                             [](const SharedBlock& b) { return b.state == SharedBlock::State::kWaiting; });
  if (oldest == shared_.end()) return false;
  SharedBlock& shared = *oldest;  // stays put: only completed blocks before it leave
  shared.state = SharedBlock::State::kCompressing;
  --shared_waiting_;
  lock.unlock();
  std::string_view bundle;
  if (!failed()) {
    try {
      bundle = compressor.bundle(shared.block);
      shared.bundle.assign(bundle);
    } catch (const std::bad_alloc&) {
      fail("out of memory compressing the packets");
    }
  }
  lock.lock();
  shared.state = SharedBlock::State::kDone;
  // Completed blocks at the front go out in order.
  while (!shared_.empty() && shared_.front().state == SharedBlock::State::kDone) {
    SharedBlock& front = shared_.front();
    put(front.bundle.empty() ? std::string_view(front.block) : std::string_view(front.bundle));
    front.block.clear();
    spare_.push_back(std::move(front.block));
    shared_.pop_front();
  }
  changed_.notify_all();
  return true;
}

bool ProtoOutput::help() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (helper_compressor_ == nullptr || helping_ || shared_waiting_ == 0) return false;
  helping_ = true;
  const bool helped = compress_shared(lock, *helper_compressor_);
  helping_ = false;
  return helped;
}

void ProtoOutput::drain_shared() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (compress_shared(lock, *writer_compressor_)) {
  }
  changed_.wait(lock, [&] { return shared_.empty(); });  // the helper's last block
}

void ProtoOutput::compress_and_put(Compressor& compressor, std::string_view block) {
  if (failed()) return;
  try {
    const std::string_view bundle = compressor.bundle(block);
    put(bundle.empty() ? block : bundle);
  } catch (const std::bad_alloc&) {
    fail("out of memory compressing the packets");
  }
}

bool ProtoOutput::put(std::string_view bytes) {
  if (bytes.empty() || failed()) return !failed();
  errno = 0;
  if (gz_ != nullptr) {
    if (gzwrite(gz_, bytes.data(), static_cast<unsigned>(bytes.size())) != static_cast<int>(bytes.size()))
      fail(nullptr);
  } else if (file_ != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    fail(nullptr);
  }
  if (!failed()) file_bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
  return !failed();
}

void ProtoOutput::spill() {
  put(buffer_);
  buffer_.clear();
}

bool ProtoOutput::close() {
  if (closed_) return !failed();
  closed_ = true;
  if (writer_compressor_ != nullptr) {
    hand_over_block();
    drain_shared();
  }
  if (compressor_.joinable()) {
    hand_over_block();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    compressor_.join();
  }
  spill();
  errno = 0;
  if (gz_ != nullptr) {
    if (gzclose(gz_) != Z_OK) fail(nullptr);
    gz_ = nullptr;
  }
  if (file_ != nullptr) {
    if (std::fclose(file_) != 0) fail(nullptr);
    file_ = nullptr;
  }
  return !failed();
}

void ProtoOutput::fail(const char* why) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (!failed()) error_ = why != nullptr ? why : errno != 0 ? std::strerror(errno) : "write error";
  failed_.store(true, std::memory_order_relaxed);
}

std::string ProtoOutput::error() const {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return error_;
}

}  // namespace proflaunch::tools::emit
