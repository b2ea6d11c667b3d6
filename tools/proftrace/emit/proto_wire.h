// Protocol buffer wire format, written by hand (no generated code, no
// library): varints, fixed64, length-delimited fields and nested messages
// into a growing byte string. A nested message reserves one length byte and
// moves its body when the length needs more, so every length is minimal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace proflaunch::tools::emit {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

inline size_t varint_size(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

// Writes `value` as a varint at `out`; returns the end (at most 10 bytes).
inline char* put_varint(char* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<char>(value);
  return out;
}

class ProtoBuffer {
 public:
  ProtoBuffer() = default;
  ProtoBuffer(const ProtoBuffer&) = delete;
  ProtoBuffer& operator=(const ProtoBuffer&) = delete;
  ProtoBuffer(ProtoBuffer&& other) noexcept { swap(other); }
  ProtoBuffer& operator=(ProtoBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  void swap(ProtoBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  void clear() { size_ = 0; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  std::string_view view() const { return std::string_view(data_.get(), size_); }

  void varint(uint64_t value) {
    ensure(10);
    char* out = data_.get() + size_;
    if (value < 0x80) {  // tags, iids, small values: most varints
      *out = static_cast<char>(value);
      ++size_;
      return;
    }
    while (value >= 0x80) {
      *out++ = static_cast<char>(value | 0x80);
      value >>= 7;
    }
    *out++ = static_cast<char>(value);
    size_ = static_cast<size_t>(out - data_.get());
  }
  void tag(uint32_t field, WireType type) { varint(uint64_t{field} << 3 | static_cast<uint8_t>(type)); }

  void field_varint(uint32_t field, uint64_t value) {
    tag(field, WireType::kVarint);
    varint(value);
  }
  // int32/int64 fields: negative values take ten bytes (two's complement).
  void field_int(uint32_t field, int64_t value) { field_varint(field, static_cast<uint64_t>(value)); }
  void field_bool(uint32_t field, bool value) { field_varint(field, value ? 1 : 0); }
  void field_fixed64(uint32_t field, uint64_t value) {
    tag(field, WireType::kFixed64);
    ensure(8);
    for (int i = 0; i < 8; ++i) data_[size_++] = static_cast<char>(value >> (8 * i));
  }
  void field_double(uint32_t field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    field_fixed64(field, bits);
  }
  void field_bytes(uint32_t field, std::string_view bytes) {
    tag(field, WireType::kLengthDelimited);
    varint(bytes.size());
    append(bytes);
  }
  void append(std::string_view bytes) {
    ensure(bytes.size());
    if (!bytes.empty()) std::memcpy(data_.get() + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
  }

  // A nested message: begin_message returns a mark for end_message.
  size_t begin_message(uint32_t field) {
    tag(field, WireType::kLengthDelimited);
    ensure(1);
    data_[size_++] = 0;
    return size_ - 1;
  }
  void end_message(size_t mark) {
    const size_t length = size_ - mark - 1;
    if (length < 0x80) {
      data_[mark] = static_cast<char>(length);
      return;
    }
    const size_t length_bytes = varint_size(length);
    ensure(length_bytes - 1);
    std::memmove(data_.get() + mark + length_bytes, data_.get() + mark + 1, length);
    size_ += length_bytes - 1;
    uint64_t value = length;
    for (size_t i = 0; i < length_bytes; ++i) {
      data_[mark + i] = static_cast<char>((value & 0x7F) | (i + 1 < length_bytes ? 0x80 : 0));
      value >>= 7;
    }
  }

  // Writing in place: room for `bytes` more at the returned pointer; then
  // commit() the end of what was written there.
  char* reserve(size_t bytes) {
    ensure(bytes);
    return data_.get() + size_;
  }
  void commit(const char* end) { size_ = static_cast<size_t>(end - data_.get()); }

  // A whole message already encoded in `body`, as field `field`.
  void field_message(uint32_t field, const ProtoBuffer& body) { field_bytes(field, body.view()); }

 private:
  void ensure(size_t more) {
    if (size_ + more <= capacity_) [[likely]] return;
    grow(more);
  }
  void grow(size_t more) {
    size_t capacity = capacity_ == 0 ? 256 : capacity_ * 2;
    while (capacity < size_ + more) capacity *= 2;
    std::unique_ptr<char[]> data(new char[capacity]);
    if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace proflaunch::tools::emit
