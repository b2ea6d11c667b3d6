// Process-wide simulator state, created by the first successful cuInit.
//
// Nothing here is ever destroyed: worker threads may still be running while
// the process exits (the real driver lets a process exit with work pending), so
// no global with a destructor may be touched by them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "config.h"
#include "cuda_api.h"
#include "handle_set.h"
#include "memory_registry.h"

struct CUmemPoolHandle_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
struct CUlib_st;

namespace simgpu {

struct DeviceStateFile;
struct DeviceStateSlot;

struct Device {
  int ordinal = 0;   // as this process sees it (after CUDA_VISIBLE_DEVICES)
  int physical = 0;  // the machine's device: its UUID, PCI bus and state file
  // The machine-wide state file (device_telemetry.h); null when unavailable.
  DeviceStateFile* telemetry = nullptr;
  DeviceStateSlot* telemetry_slot = nullptr;
  uint64_t total_bytes = 0;
  // Everything that occupies device memory: cuMemAlloc*, pool reservations,
  // cuMemCreate physical memory, module globals.
  std::atomic<uint64_t> used_bytes{0};

  std::mutex mutex;  // primary context retain count and flags
  CUctx_st* primary_context = nullptr;
  int primary_retain_count = 0;
  unsigned primary_flags = 0;

  CUmemPoolHandle_st* default_pool = nullptr;
  std::atomic<CUmemPoolHandle_st*> current_pool{nullptr};

  // Reserves `bytes` of device memory; false (and nothing reserved) if it does not fit.
  bool reserve_bytes(uint64_t bytes);
  void release_bytes(uint64_t bytes);
};

struct DriverState {
  DriverConfig config;
  std::vector<std::unique_ptr<Device>> devices;
  MemoryRegistry memory;

  HandleSet<CUctx_st> contexts;  // every context ever created (they are never freed)
  HandleSet<CUstream_st> streams;
  HandleSet<CUevent_st> events;
  HandleSet<CUmod_st> modules;
  HandleSet<CUfunc_st> functions;
  HandleSet<CUlib_st> libraries;
  HandleSet<CUmemPoolHandle_st> pools;
  HandleSet<CUgraph_st> graphs;          // capture.h
  HandleSet<CUgraphExec_st> graph_execs;

  // Pinned and registered host memory, against config.pinned_memory_bytes.
  std::atomic<uint64_t> pinned_bytes{0};
  bool reserve_pinned_bytes(uint64_t bytes);
  void release_pinned_bytes(uint64_t bytes) { pinned_bytes.fetch_sub(bytes); }

  std::atomic<unsigned long long> next_id{1};
  unsigned long long new_id() { return next_id.fetch_add(1); }
};

// Valid only after driver_ready() returned CUDA_SUCCESS.
DriverState& state();

// The device with this ordinal, or nullptr.
Device* find_device(CUdevice ordinal);

// Waits for every operation submitted to any context of `device` (nullptr: all devices).
void synchronize_device(Device* device);

}  // namespace simgpu
