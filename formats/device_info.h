// A DeviceInfo record from a description of the device whose fields are
// named as the record's: the shim's DeviceDescription (what the driver said)
// and TraceBuilder's DeviceSpec (what a test says). One copy of the fields,
// so a field added to DeviceInfo is filled everywhere or nowhere.
#pragma once

#include <cstdint>
#include <cstring>

#include "formats/records.h"

namespace proflaunch::format {

template <typename Description>
DeviceInfoRecord device_info_record(const Description& d, int32_t device, uint32_t name_string) {
  DeviceInfoRecord record{};
  record.header = header_for<DeviceInfoRecord>();
  record.device = device;
  record.vendor = static_cast<uint8_t>(d.vendor);
  record.name_string = name_string;
  record.multiprocessor_count = d.multiprocessor_count;
  record.total_memory_bytes = d.total_memory_bytes;
  std::memcpy(record.uuid, d.uuid, sizeof record.uuid);
  record.max_threads_per_multiprocessor = d.max_threads_per_multiprocessor;
  record.max_blocks_per_multiprocessor = d.max_blocks_per_multiprocessor;
  record.registers_per_multiprocessor = d.registers_per_multiprocessor;
  record.registers_per_block = d.registers_per_block;
  record.shared_bytes_per_multiprocessor = d.shared_bytes_per_multiprocessor;
  record.shared_bytes_per_block = d.shared_bytes_per_block;
  record.shared_bytes_per_block_optin = d.shared_bytes_per_block_optin;
  record.reserved_shared_bytes_per_block = d.reserved_shared_bytes_per_block;
  record.warp_size = d.warp_size;
  record.compute_capability_major = d.compute_capability_major;
  record.compute_capability_minor = d.compute_capability_minor;
  return record;
}

}  // namespace proflaunch::format
