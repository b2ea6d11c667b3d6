// .eh_frame_hdr search and a CFA program interpreter for the subset in
// eh_frame.h. Formats: the LSB "Exception Frames" chapter (.eh_frame,
// .eh_frame_hdr, DW_EH_PE pointer encodings) and DWARF 4 section 6.4 (call
// frame instructions).
#include "preload/stacks/eh_frame.h"

#include <cstring>

namespace proflaunch::stacks {
namespace {

// DWARF register numbers on x86-64.
constexpr uint64_t kRegRbp = 6;
constexpr uint64_t kRegRsp = 7;
constexpr uint64_t kRegReturnAddress = 16;

// DW_EH_PE pointer encodings.
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeAbsptr = 0x00;
constexpr uint8_t kPeUleb128 = 0x01;
constexpr uint8_t kPeUdata2 = 0x02;
constexpr uint8_t kPeUdata4 = 0x03;
constexpr uint8_t kPeUdata8 = 0x04;
constexpr uint8_t kPeSleb128 = 0x09;
constexpr uint8_t kPeSdata2 = 0x0a;
constexpr uint8_t kPeSdata4 = 0x0b;
constexpr uint8_t kPeSdata8 = 0x0c;
constexpr uint8_t kPePcrel = 0x10;
constexpr uint8_t kPeDatarel = 0x30;
constexpr uint8_t kPeIndirect = 0x80;

// Reads from memory the loader mapped; `end` bounds every read of one record.
class Cursor {
 public:
  Cursor(const uint8_t* at, const uint8_t* end) : at_(at), end_(end) {}
  bool ok() const { return ok_; }
  bool done() const { return at_ >= end_; }
  const uint8_t* at() const { return at_; }
  void skip(uint64_t bytes) {
    if (bytes > static_cast<uint64_t>(end_ - at_)) ok_ = false;
    else at_ += bytes;
  }
  template <typename T>
  T fixed() {
    T value{};
    if (sizeof(T) > static_cast<size_t>(end_ - at_)) {
      ok_ = false;
      return value;
    }
    std::memcpy(&value, at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; at_ < end_; shift += 7) {
      const uint8_t byte = *at_++;
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    ok_ = false;
    return 0;
  }
  int64_t sleb() {
    int64_t value = 0;
    unsigned shift = 0;
    while (at_ < end_) {
      const uint8_t byte = *at_++;
      if (shift < 64) value |= static_cast<int64_t>(uint64_t{byte & 0x7fu} << shift);
      shift += 7;
      if ((byte & 0x80) == 0) {
        if (shift < 64 && (byte & 0x40) != 0) value |= -(int64_t{1} << shift);
        return value;
      }
    }
    ok_ = false;
    return 0;
  }
  // A DW_EH_PE-encoded pointer. `data_base` is the base of datarel values.
  // textrel and funcrel are not used on x86-64 Linux: reading them fails.
  uint64_t pointer(uint8_t encoding, uintptr_t data_base = 0) {
    if (encoding == kPeOmit) return 0;
    const auto field = reinterpret_cast<uintptr_t>(at_);
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case kPeAbsptr: value = fixed<uint64_t>(); break;
      case kPeUleb128: value = uleb(); break;
      case kPeUdata2: value = fixed<uint16_t>(); break;
      case kPeUdata4: value = fixed<uint32_t>(); break;
      case kPeUdata8: value = fixed<uint64_t>(); break;
      case kPeSleb128: value = static_cast<uint64_t>(sleb()); break;
      case kPeSdata2: value = static_cast<uint64_t>(int64_t{fixed<int16_t>()}); break;
      case kPeSdata4: value = static_cast<uint64_t>(int64_t{fixed<int32_t>()}); break;
      case kPeSdata8: value = fixed<uint64_t>(); break;
      default: ok_ = false; return 0;
    }
    switch (encoding & 0x70) {
      case 0: break;
      case kPePcrel: value += field; break;
      case kPeDatarel: value += data_base; break;
      default: ok_ = false; return 0;
    }
    if ((encoding & kPeIndirect) != 0 && ok_) {
      uint64_t target;
      std::memcpy(&target, reinterpret_cast<const void*>(value), sizeof target);
      value = target;
    }
    return value;
  }

 private:
  const uint8_t* at_;
  const uint8_t* end_;
  bool ok_ = true;
};

// One CIE or FDE: its contents, after the length field(s).
struct Entry {
  const uint8_t* start = nullptr;  // the CIE id / CIE pointer field
  const uint8_t* end = nullptr;
};

bool read_entry(const uint8_t* at, Entry* entry) {
  uint32_t length32;
  std::memcpy(&length32, at, sizeof length32);
  at += 4;
  uint64_t length = length32;
  if (length32 == 0xffffffffu) {
    std::memcpy(&length, at, sizeof length);
    at += 8;
  }
  if (length == 0 || length > (uint64_t{1} << 30)) return false;
  entry->start = at;
  entry->end = at + length;
  return true;
}

struct Cie {
  uint64_t code_alignment = 1;
  int64_t data_alignment = 1;
  uint64_t return_address_register = kRegReturnAddress;
  uint8_t fde_encoding = kPeAbsptr;
  bool has_augmentation_data = false;
  bool signal_frame = false;
  const uint8_t* instructions = nullptr;
  const uint8_t* end = nullptr;
};

bool parse_cie(const Entry& entry, Cie* cie) {
  Cursor in(entry.start, entry.end);
  if (in.fixed<uint32_t>() != 0) return false;  // CIE id 0 in .eh_frame
  const uint8_t version = in.fixed<uint8_t>();
  if (version != 1 && version != 3) return false;
  const auto* augmentation = reinterpret_cast<const char*>(in.at());
  const void* nul = std::memchr(augmentation, 0, static_cast<size_t>(entry.end - in.at()));
  if (nul == nullptr) return false;
  in.skip(static_cast<const uint8_t*>(nul) - in.at() + 1);
  const char* aug = augmentation;
  if (aug[0] == 'e' && aug[1] == 'h') {  // pre-GCC-3 "eh" data pointer
    in.skip(8);
    aug += 2;
  }
  cie->code_alignment = in.uleb();
  cie->data_alignment = in.sleb();
  cie->return_address_register = version == 1 ? in.fixed<uint8_t>() : in.uleb();
  if (aug[0] == 'z') {
    cie->has_augmentation_data = true;
    const uint64_t length = in.uleb();
    Cursor data(in.at(), in.at() + length);
    in.skip(length);
    for (const char* c = aug + 1; *c != '\0'; ++c) {
      switch (*c) {
        case 'L': data.fixed<uint8_t>(); break;  // LSDA encoding
        case 'R': cie->fde_encoding = data.fixed<uint8_t>(); break;
        case 'S': cie->signal_frame = true; break;
        case 'P': {  // personality: encoding, then the encoded pointer
          // Only its size matters: read the format, never follow it.
          const uint8_t encoding = data.fixed<uint8_t>();
          if ((encoding & 0x70) > kPeDatarel) return false;  // aligned or unknown
          data.pointer(static_cast<uint8_t>(encoding & 0x0f));
          break;
        }
        case 'B': case 'G': break;  // AArch64 flags without data
        default: return false;      // unknown augmentation: its data cannot be skipped safely
      }
    }
    if (!data.ok()) return false;
  } else if (aug[0] != '\0') {
    return false;
  }
  if (!in.ok() || cie->code_alignment == 0) return false;
  cie->instructions = in.at();
  cie->end = entry.end;
  return true;
}

// Where a register is, for the three registers the walker follows.
struct RegisterRule {
  enum Kind : uint8_t { kUnspecified, kSameValue, kUndefined, kOffset, kOther };
  Kind kind = kUnspecified;
  int64_t offset = 0;
};

struct FrameState {
  uint64_t cfa_register = kRegRsp;
  int64_t cfa_offset = 0;
  bool cfa_expression = false;
  RegisterRule rbp, rsp, return_address;
};

class CfaProgram {
 public:
  CfaProgram(const Cie& cie, uintptr_t target) : cie_(cie), target_(target) {}

  // Runs the CIE's initial instructions.
  bool run_initial() {
    if (!run(cie_.instructions, cie_.end, /*stop_at_target=*/false)) return false;
    initial_ = state_;
    return true;
  }
  // Runs an FDE's instructions from `location` up to the target address.
  bool run_fde(const uint8_t* begin, const uint8_t* end, uintptr_t location) {
    location_ = location;
    return run(begin, end, /*stop_at_target=*/true);
  }
  const FrameState& state() const { return state_; }

 private:
  RegisterRule* tracked(uint64_t reg) {
    if (reg == kRegRbp) return &state_.rbp;
    if (reg == kRegRsp) return &state_.rsp;
    if (reg == cie_.return_address_register) return &state_.return_address;
    return nullptr;  // other registers do not move the walk
  }
  const RegisterRule* initial_rule(uint64_t reg) const {
    if (reg == kRegRbp) return &initial_.rbp;
    if (reg == kRegRsp) return &initial_.rsp;
    if (reg == cie_.return_address_register) return &initial_.return_address;
    return nullptr;
  }
  void set(uint64_t reg, RegisterRule::Kind kind, int64_t offset = 0) {
    if (RegisterRule* rule = tracked(reg)) *rule = RegisterRule{kind, offset};
  }
  void restore(uint64_t reg) {
    if (RegisterRule* rule = tracked(reg)) *rule = *initial_rule(reg);
  }
  // False: the target was passed (stop), or the location overflowed.
  bool advance(uint64_t delta, bool stop_at_target) {
    location_ += delta * cie_.code_alignment;
    return !(stop_at_target && location_ > target_);
  }

  bool run(const uint8_t* begin, const uint8_t* end, bool stop_at_target) {
    Cursor in(begin, end);
    const int64_t data_alignment = cie_.data_alignment;
    while (!in.done() && in.ok()) {
      const uint8_t op = in.fixed<uint8_t>();
      const uint8_t low = op & 0x3f;
      switch (op >> 6) {
        case 1:  // DW_CFA_advance_loc
          if (!advance(low, stop_at_target)) return true;
          continue;
        case 2:  // DW_CFA_offset
          set(low, RegisterRule::kOffset, static_cast<int64_t>(in.uleb()) * data_alignment);
          continue;
        case 3:  // DW_CFA_restore
          restore(low);
          continue;
        default: break;
      }
      switch (op) {
        case 0x00: break;  // nop
        case 0x01: {       // set_loc
          const uint64_t location = in.pointer(cie_.fde_encoding);
          if (stop_at_target && location > target_) return in.ok();
          location_ = location;
          break;
        }
        case 0x02: if (!advance(in.fixed<uint8_t>(), stop_at_target)) return in.ok(); break;
        case 0x03: if (!advance(in.fixed<uint16_t>(), stop_at_target)) return in.ok(); break;
        case 0x04: if (!advance(in.fixed<uint32_t>(), stop_at_target)) return in.ok(); break;
        case 0x05: {  // offset_extended
          const uint64_t reg = in.uleb();
          set(reg, RegisterRule::kOffset, static_cast<int64_t>(in.uleb()) * data_alignment);
          break;
        }
        case 0x06: restore(in.uleb()); break;
        case 0x07: set(in.uleb(), RegisterRule::kUndefined); break;
        case 0x08: set(in.uleb(), RegisterRule::kSameValue); break;
        case 0x09: {  // register: the value is in another register
          const uint64_t reg = in.uleb();
          in.uleb();
          set(reg, RegisterRule::kOther);
          break;
        }
        case 0x0a:  // remember_state
          if (saved_count_ == kMaxSavedStates) return false;
          saved_[saved_count_++] = state_;
          break;
        case 0x0b: {  // restore_state
          if (saved_count_ == 0) return false;
          // The whole row, CFA included (compilers bracket an epilogue with
          // remember/restore, and the epilogue moves the CFA).
          state_ = saved_[--saved_count_];
          break;
        }
        case 0x0c:  // def_cfa
          state_.cfa_register = in.uleb();
          state_.cfa_offset = static_cast<int64_t>(in.uleb());
          state_.cfa_expression = false;
          break;
        case 0x0d:  // def_cfa_register
          state_.cfa_register = in.uleb();
          state_.cfa_expression = false;
          break;
        case 0x0e:  // def_cfa_offset
          state_.cfa_offset = static_cast<int64_t>(in.uleb());
          state_.cfa_expression = false;
          break;
        case 0x0f:  // def_cfa_expression
          in.skip(in.uleb());
          state_.cfa_expression = true;
          break;
        case 0x10: {  // expression
          const uint64_t reg = in.uleb();
          in.skip(in.uleb());
          set(reg, RegisterRule::kOther);
          break;
        }
        case 0x11: {  // offset_extended_sf
          const uint64_t reg = in.uleb();
          set(reg, RegisterRule::kOffset, in.sleb() * data_alignment);
          break;
        }
        case 0x12:  // def_cfa_sf
          state_.cfa_register = in.uleb();
          state_.cfa_offset = in.sleb() * data_alignment;
          state_.cfa_expression = false;
          break;
        case 0x13:  // def_cfa_offset_sf
          state_.cfa_offset = in.sleb() * data_alignment;
          state_.cfa_expression = false;
          break;
        case 0x14:    // val_offset
        case 0x15: {  // val_offset_sf
          const uint64_t reg = in.uleb();
          if (op == 0x14) in.uleb();
          else in.sleb();
          set(reg, RegisterRule::kOther);
          break;
        }
        case 0x16: {  // val_expression
          const uint64_t reg = in.uleb();
          in.skip(in.uleb());
          set(reg, RegisterRule::kOther);
          break;
        }
        case 0x2e: in.uleb(); break;  // GNU_args_size: only for landing pads
        case 0x2f: {                  // GNU_negative_offset_extended
          const uint64_t reg = in.uleb();
          set(reg, RegisterRule::kOffset, -static_cast<int64_t>(in.uleb()) * data_alignment);
          break;
        }
        default: return false;  // an opcode we do not know: do not guess
      }
    }
    return in.ok();
  }

  static constexpr int kMaxSavedStates = 8;
  const Cie& cie_;
  uintptr_t target_;
  uintptr_t location_ = 0;
  FrameState state_;
  FrameState initial_;
  FrameState saved_[kMaxSavedStates];
  int saved_count_ = 0;
};

FrameRule unsupported() { return FrameRule{FrameRuleKind::kUnsupported}; }

bool fits_int32(int64_t value) { return value >= INT32_MIN && value <= INT32_MAX; }

FrameRule rule_from_state(const FrameState& state) {
  if (state.return_address.kind == RegisterRule::kUndefined) return FrameRule{FrameRuleKind::kOutermost};
  if (state.cfa_expression) return unsupported();
  if (state.cfa_register != kRegRsp && state.cfa_register != kRegRbp) return unsupported();
  if (state.return_address.kind != RegisterRule::kOffset || state.return_address.offset != -8)
    return unsupported();
  if (state.rsp.kind != RegisterRule::kUnspecified && state.rsp.kind != RegisterRule::kSameValue)
    return unsupported();
  FrameRule rule;
  rule.kind = FrameRuleKind::kStandard;
  rule.cfa_from_rbp = state.cfa_register == kRegRbp;
  if (!fits_int32(state.cfa_offset)) return unsupported();
  rule.cfa_offset = static_cast<int32_t>(state.cfa_offset);
  switch (state.rbp.kind) {
    case RegisterRule::kUnspecified:
    case RegisterRule::kSameValue: break;
    case RegisterRule::kOffset:
      if (!fits_int32(state.rbp.offset)) return unsupported();
      rule.rbp_saved = true;
      rule.rbp_offset = static_cast<int32_t>(state.rbp.offset);
      break;
    default: return unsupported();
  }
  return rule;
}

// The FDE whose range holds `pc`, through the sorted table of
// .eh_frame_hdr (every linker writes it as datarel sdata4 pairs).
const uint8_t* find_fde(const uint8_t* hdr, uintptr_t pc) {
  if (hdr[0] != 1) return nullptr;
  const uint8_t frame_pointer_encoding = hdr[1], count_encoding = hdr[2], table_encoding = hdr[3];
  if (count_encoding == kPeOmit || table_encoding != (kPeDatarel | kPeSdata4)) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(hdr);
  Cursor in(hdr + 4, hdr + 4 + 32);
  in.pointer(frame_pointer_encoding, base);
  const uint64_t count = in.pointer(count_encoding, base);
  if (!in.ok() || count == 0) return nullptr;
  struct Pair {
    int32_t location;
    int32_t fde;
  };
  const auto* table = reinterpret_cast<const Pair*>(in.at());
  const int64_t target = static_cast<int64_t>(pc - base);
  uint64_t low = 0, high = count;  // first entry with location > target
  while (low < high) {
    const uint64_t mid = low + (high - low) / 2;
    int32_t location;
    std::memcpy(&location, &table[mid].location, sizeof location);
    if (location <= target) low = mid + 1;
    else high = mid;
  }
  if (low == 0) return nullptr;
  int32_t fde;
  std::memcpy(&fde, &table[low - 1].fde, sizeof fde);
  return hdr + fde;
}

}  // namespace

FrameRule eh_frame_rule(const uint8_t* eh_frame_hdr, uintptr_t pc) noexcept {
  if (eh_frame_hdr == nullptr) return unsupported();
  const uint8_t* fde_at = find_fde(eh_frame_hdr, pc);
  Entry fde;
  if (fde_at == nullptr || !read_entry(fde_at, &fde)) return unsupported();
  uint32_t cie_pointer;
  std::memcpy(&cie_pointer, fde.start, sizeof cie_pointer);
  if (cie_pointer == 0) return unsupported();  // a CIE, not an FDE
  Entry cie_entry;
  Cie cie;
  if (!read_entry(fde.start - cie_pointer, &cie_entry) || !parse_cie(cie_entry, &cie)) return unsupported();
  if (cie.signal_frame) return unsupported();

  Cursor in(fde.start + 4, fde.end);
  const uint64_t pc_begin = in.pointer(cie.fde_encoding);
  const uint64_t pc_range = in.pointer(cie.fde_encoding & 0x0f);
  if (cie.has_augmentation_data) in.skip(in.uleb());
  if (!in.ok() || pc < pc_begin || pc - pc_begin >= pc_range) return unsupported();

  CfaProgram program(cie, pc);
  if (!program.run_initial() || !program.run_fde(in.at(), fde.end, pc_begin)) return unsupported();
  return rule_from_state(program.state());
}

}  // namespace proflaunch::stacks
