// FunctionDef and DeviceInfo grew (resource use and occupancy limits, for
// the kernel view's occupancy estimate). Traces written before keep reading:
// their records are whole and the new fields read as "unknown"; a reader
// that knows only the first layout reads a new record by its prefix.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "formats/record_kinds.h"
#include "formats/trace_builder.h"
#include "tests/unit/formats/collecting_visitor.h"

namespace proflaunch::format {
namespace {

using testing::open_bytes;

// The first versions, as a reader built before the change knows them.
#pragma pack(push, 1)
struct FunctionDefV1 {
  RecordHeader header;
  uint32_t name_string;
  uint64_t handle;
  uint64_t since_ns;
};
struct DeviceInfoV1 {
  RecordHeader header;
  int32_t device;
  uint8_t vendor;
  uint8_t reserved[3];
  uint32_t name_string;
  uint32_t multiprocessor_count;
  uint64_t total_memory_bytes;
  uint8_t uuid[16];
};
#pragma pack(pop)
static_assert(sizeof(FunctionDefV1) == 24 && sizeof(DeviceInfoV1) == 44);

// Reads through RecordView::as, which is what every tool uses.
struct Definitions : RecordVisitor {
  std::vector<FunctionDefRecord> functions;
  std::vector<DeviceInfoRecord> devices;
  std::vector<FunctionDefV1> functions_v1;
  std::vector<DeviceInfoV1> devices_v1;
  void on_record(const RecordView& record) override {
    if (record.record_kind() == RecordKind::kFunctionDef) {
      functions.push_back(record.as<FunctionDefRecord>());
      functions_v1.push_back(record.as<FunctionDefV1>());
    } else if (record.record_kind() == RecordKind::kDeviceInfo) {
      devices.push_back(record.as<DeviceInfoRecord>());
      devices_v1.push_back(record.as<DeviceInfoV1>());
    }
  }
};

template <typename T>
std::span<const uint8_t> bytes_of(const T& record) {
  return {reinterpret_cast<const uint8_t*>(&record), sizeof record};
}

ReadReport read_all(TraceBuilder& trace, Definitions& out) {
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  EXPECT_TRUE(reader) << error;
  return reader ? reader->read(out) : ReadReport{};
}

TEST(GrownDefinitions, KindTableKnowsBothSizes) {
  EXPECT_EQ(minimum_record_bytes(static_cast<uint16_t>(RecordKind::kFunctionDef)), 24u);
  EXPECT_EQ(fixed_record_bytes(static_cast<uint16_t>(RecordKind::kFunctionDef)), 48u);
  EXPECT_EQ(minimum_record_bytes(static_cast<uint16_t>(RecordKind::kDeviceInfo)), 44u);
  EXPECT_EQ(fixed_record_bytes(static_cast<uint16_t>(RecordKind::kDeviceInfo)), 84u);
}

TEST(GrownDefinitions, FirstVersionRecordsAreWholeWithResourcesUnknown) {
  // Bytes exactly as a writer of the first version produced them, back to
  // back in one chunk: the fields the function record lacks must read 0,
  // not the device record's bytes that follow it.
  const FunctionDefV1 old_function{{static_cast<uint16_t>(RecordKind::kFunctionDef), 24}, 7, 0xF00D, 55};
  DeviceInfoV1 old_device{{static_cast<uint16_t>(RecordKind::kDeviceInfo), 44}, 1, 1, {}, 8, 132, 80ull << 30, {}};
  std::memset(old_device.uuid, 0xEE, sizeof old_device.uuid);
  TraceBuilder trace;
  trace.raw_record(1, ChunkKind::kDefinitions, bytes_of(old_function));
  trace.raw_record(1, ChunkKind::kDefinitions, bytes_of(old_device));
  Definitions read;
  const ReadReport report = read_all(trace, read);
  EXPECT_TRUE(report.clean());
  EXPECT_EQ(report.records_malformed, 0u);
  ASSERT_EQ(read.functions.size(), 1u);
  const FunctionDefRecord& f = read.functions[0];
  EXPECT_EQ(f.handle, 0xF00Du);
  EXPECT_EQ(f.since_ns, 55u);
  EXPECT_EQ(f.name_string, 7u);
  EXPECT_EQ(f.attributes_known, 0u);
  EXPECT_EQ(f.registers_per_thread, 0u);
  EXPECT_EQ(f.static_shared_bytes, 0u);
  EXPECT_EQ(f.max_threads_per_block, 0u);
  EXPECT_EQ(f.local_bytes_per_thread, 0u);
  ASSERT_EQ(read.devices.size(), 1u);
  const DeviceInfoRecord& d = read.devices[0];
  EXPECT_EQ(d.device, 1);
  EXPECT_EQ(d.multiprocessor_count, 132u);
  EXPECT_EQ(uint64_t{d.total_memory_bytes}, 80ull << 30);  // packed: a copy, not a reference
  EXPECT_EQ(d.max_threads_per_multiprocessor, 0u);
  EXPECT_EQ(d.max_blocks_per_multiprocessor, 0u);
  EXPECT_EQ(d.registers_per_multiprocessor, 0u);
  EXPECT_EQ(d.shared_bytes_per_multiprocessor, 0u);
  EXPECT_EQ(d.warp_size, 0u);
  EXPECT_EQ(d.compute_capability_major, 0u);
}

TEST(GrownDefinitions, RecordsShorterThanTheFirstVersionAreMalformed) {
  FunctionDefV1 cut{{static_cast<uint16_t>(RecordKind::kFunctionDef), 20}, 7, 0xF00D, 55};
  TraceBuilder trace;
  trace.raw_record(1, ChunkKind::kDefinitions, std::span<const uint8_t>(bytes_of(cut).data(), 20));
  Definitions read;
  EXPECT_EQ(read_all(trace, read).records_malformed, 1u);
  EXPECT_TRUE(read.functions.empty());
}

TEST(GrownDefinitions, NewFieldsRoundTripAndOldReadersReadThePrefix) {
  TraceBuilder trace;
  trace.function(1, 0xBEEF, "_Z6kernelPf", 99,
                 FunctionResources{.registers_per_thread = 40, .static_shared_bytes = 4096,
                                   .max_threads_per_block = 1024, .local_bytes_per_thread = 16,
                                   .known = kFunctionRegisters | kFunctionStaticShared |
                                            kFunctionMaxThreadsPerBlock | kFunctionLocalBytes});
  DeviceSpec spec;
  spec.ordinal = 2;
  spec.multiprocessor_count = 132;
  spec.max_threads_per_multiprocessor = 2048;
  spec.max_blocks_per_multiprocessor = 32;
  spec.registers_per_multiprocessor = 65536;
  spec.registers_per_block = 65536;
  spec.shared_bytes_per_multiprocessor = 233472;
  spec.shared_bytes_per_block = 49152;
  spec.shared_bytes_per_block_optin = 232448;
  spec.reserved_shared_bytes_per_block = 1024;
  spec.warp_size = 32;
  spec.compute_capability_major = 9;
  spec.compute_capability_minor = 0;
  trace.device(1, spec);
  Definitions read;
  EXPECT_TRUE(read_all(trace, read).clean());
  ASSERT_EQ(read.functions.size(), 1u);
  const FunctionDefRecord& f = read.functions[0];
  EXPECT_EQ(f.header.bytes, 48u);
  EXPECT_EQ(f.registers_per_thread, 40u);
  EXPECT_EQ(f.static_shared_bytes, 4096u);
  EXPECT_EQ(f.max_threads_per_block, 1024u);
  EXPECT_EQ(f.local_bytes_per_thread, 16u);
  EXPECT_EQ(f.attributes_known, 15u);
  ASSERT_EQ(read.devices.size(), 1u);
  const DeviceInfoRecord& d = read.devices[0];
  EXPECT_EQ(d.header.bytes, 84u);
  EXPECT_EQ(d.max_threads_per_multiprocessor, 2048u);
  EXPECT_EQ(d.max_blocks_per_multiprocessor, 32u);
  EXPECT_EQ(d.registers_per_multiprocessor, 65536u);
  EXPECT_EQ(d.registers_per_block, 65536u);
  EXPECT_EQ(d.shared_bytes_per_multiprocessor, 233472u);
  EXPECT_EQ(d.shared_bytes_per_block, 49152u);
  EXPECT_EQ(d.shared_bytes_per_block_optin, 232448u);
  EXPECT_EQ(d.reserved_shared_bytes_per_block, 1024u);
  EXPECT_EQ(d.warp_size, 32u);
  EXPECT_EQ(d.compute_capability_major, 9u);
  EXPECT_EQ(d.compute_capability_minor, 0u);
  // A reader of the first layout: same handle, name and SM count.
  ASSERT_EQ(read.functions_v1.size(), 1u);
  EXPECT_EQ(read.functions_v1[0].handle, 0xBEEFu);
  EXPECT_EQ(read.functions_v1[0].since_ns, 99u);
  EXPECT_EQ(read.functions_v1[0].name_string, f.name_string);
  ASSERT_EQ(read.devices_v1.size(), 1u);
  EXPECT_EQ(read.devices_v1[0].device, 2);
  EXPECT_EQ(read.devices_v1[0].multiprocessor_count, 132u);
}

}  // namespace
}  // namespace proflaunch::format
