#include "formats/record_kinds.h"

namespace proflaunch::format {
namespace {

struct KindInfo {
  std::string_view name;
  size_t fixed_bytes;
};

// One switch so that adding a kind to records.h without adding it here is
// caught by -Wswitch (the enum is complete in every case below).
std::optional<KindInfo> kind_info(uint16_t raw_kind) {
  switch (static_cast<RecordKind>(raw_kind)) {
    case RecordKind::kProcessInfo: return KindInfo{"ProcessInfo", sizeof(ProcessInfoRecord)};
    case RecordKind::kStringDef: return KindInfo{"StringDef", sizeof(StringDefRecord)};
    case RecordKind::kApiDef: return KindInfo{"ApiDef", sizeof(ApiDefRecord)};
    case RecordKind::kFunctionDef: return KindInfo{"FunctionDef", sizeof(FunctionDefRecord)};
    case RecordKind::kThreadInfo: return KindInfo{"ThreadInfo", sizeof(ThreadInfoRecord)};
    case RecordKind::kDeviceInfo: return KindInfo{"DeviceInfo", sizeof(DeviceInfoRecord)};
    case RecordKind::kSectionEnd: return KindInfo{"SectionEnd", sizeof(SectionEndRecord)};
    case RecordKind::kThreadBatch: return KindInfo{"ThreadBatch", sizeof(ThreadBatchRecord)};
    case RecordKind::kLost: return KindInfo{"Lost", sizeof(LostRecord)};
    case RecordKind::kApiCall: return KindInfo{"ApiCall", sizeof(ApiCallRecord)};
    case RecordKind::kKernelLaunch: return KindInfo{"KernelLaunch", sizeof(KernelLaunchRecord)};
    case RecordKind::kMemoryCopy: return KindInfo{"MemoryCopy", sizeof(MemoryCopyRecord)};
    case RecordKind::kMemorySet: return KindInfo{"MemorySet", sizeof(MemorySetRecord)};
    case RecordKind::kSynchronize: return KindInfo{"Synchronize", sizeof(SynchronizeRecord)};
    case RecordKind::kObjectLifecycle:
      return KindInfo{"ObjectLifecycle", sizeof(ObjectLifecycleRecord)};
    case RecordKind::kGpuActivity: return KindInfo{"GpuActivity", sizeof(GpuActivityRecord)};
    case RecordKind::kApiCount: return KindInfo{"ApiCount", sizeof(ApiCountRecord)};
    case RecordKind::kMemoryOperation:
      return KindInfo{"MemoryOperation", sizeof(MemoryOperationRecord)};
    case RecordKind::kMemoryInfo: return KindInfo{"MemoryInfo", sizeof(MemoryInfoRecord)};
    case RecordKind::kCallStack: return KindInfo{"CallStack", sizeof(CallStackRecord)};
    case RecordKind::kNativeStackDef:
      return KindInfo{"NativeStackDef", sizeof(NativeStackDefRecord)};
    case RecordKind::kPythonStackDef:
      return KindInfo{"PythonStackDef", sizeof(PythonStackDefRecord)};
    case RecordKind::kModuleDef: return KindInfo{"ModuleDef", sizeof(ModuleDefRecord)};
    case RecordKind::kSymbolDef: return KindInfo{"SymbolDef", sizeof(SymbolDefRecord)};
    case RecordKind::kCollectiveComm: return KindInfo{"CollectiveComm", sizeof(CollectiveCommRecord)};
    case RecordKind::kCollective: return KindInfo{"Collective", sizeof(CollectiveRecord)};
    case RecordKind::kCollectiveGroup: return KindInfo{"CollectiveGroup", sizeof(CollectiveGroupRecord)};
  }
  return std::nullopt;
}

}  // namespace

// The reader asks for every record: a table instead of the switch.
struct FixedSizeTable {
  FixedSizeTable() {
    for (uint16_t kind = 0; kind < 256; ++kind) {
      const auto info = kind_info(kind);
      bytes[kind] = info ? static_cast<uint16_t>(info->fixed_bytes) : 0;
    }
  }
  uint16_t bytes[256];
};

std::optional<size_t> fixed_record_bytes(uint16_t kind) {
  static const FixedSizeTable table;
  if (kind >= 256 || table.bytes[kind] == 0) return std::nullopt;
  return table.bytes[kind];
}

std::optional<size_t> minimum_record_bytes(uint16_t kind) {
  // Kinds whose fixed part grew: their first size.
  if (kind == static_cast<uint16_t>(RecordKind::kMemoryCopy)) return 88;
  return fixed_record_bytes(kind);
}

std::optional<std::string_view> record_kind_name(uint16_t kind) {
  if (auto info = kind_info(kind)) return info->name;
  return std::nullopt;
}

bool is_definition_kind(uint16_t kind) {
  if (kind >= static_cast<uint16_t>(RecordKind::kNativeStackDef) &&
      kind <= static_cast<uint16_t>(RecordKind::kSymbolDef))
    return true;
  return kind >= static_cast<uint16_t>(RecordKind::kProcessInfo) &&
         kind <= static_cast<uint16_t>(RecordKind::kSectionEnd);
}

}  // namespace proflaunch::format
