// The simulated devices' state as the simulated driver shares it between
// processes, the way a kernel driver's state is visible to every process on
// the machine: one file per physical device, mapped shared, under
// SIMGPU_STATE_DIR (default /dev/shm/simgpu-<uid>). The driver (libcuda.so.1)
// of every process using the device writes it; the simulated NVML
// (libnvidia-ml.so.1) reads it from any process, so a sampler outside the
// program sees the program's work. The machine's AMD devices are other
// devices with files of their own ("amdgpu<N>", NVIDIA's are "gpu<N>"): the
// simulated HIP runtime (libamdhip64.so.5) writes them, the simulated ROCm
// SMI (librocm_smi64.so.1) reads them.
//
// A zero-filled file is a valid, idle device: whoever creates it only sizes
// it. Every field is a lock-free atomic; nothing needs a lock that a process
// could die holding.
#pragma once

#include <atomic>
#include <cstdint>

namespace simgpu {

inline constexpr uint32_t kDeviceStateSlots = 64;  // processes per device
inline constexpr const char* kNvidiaStateFilePrefix = "gpu";
inline constexpr const char* kAmdStateFilePrefix = "amdgpu";

// The unique id of the machine's AMD device `physical`: what ROCm SMI's
// rsmi_dev_unique_id_get answers, and whose 16 hex digits ROCr reports as the
// agent's UUID "GPU-<16 hex>" and HIP as hipDeviceGetUuid's 16 bytes (text).
// "SIMAMD" and the index.
inline constexpr uint64_t amd_unique_id(uint32_t physical) { return 0x53494d414d440000ull + physical; }

struct DeviceStateSlot {
  std::atomic<uint32_t> pid;  // 0: free; a dead pid's slot is free too
  uint32_t reserved;
  std::atomic<uint64_t> used_bytes;  // device memory this process holds
};

// Busy time is the union of work intervals, accumulated as each operation
// starts (the simulator knows its modelled end then): busy_until_ns is the
// latest end so far, busy_ns counts every interval up to busy_until_ns.
// Busy time up to `now` is busy_ns - max(0, busy_until_ns - now).
struct BusyClock {
  std::atomic<uint64_t> busy_ns;
  std::atomic<int64_t> busy_until_ns;

  void add(int64_t start_ns, int64_t end_ns) {
    int64_t until = busy_until_ns.load(std::memory_order_relaxed);
    while (end_ns > until) {
      if (busy_until_ns.compare_exchange_weak(until, end_ns)) {
        const int64_t from = start_ns > until ? start_ns : until;
        busy_ns.fetch_add(uint64_t(end_ns - from));
        return;
      }
    }
  }
  uint64_t busy_until(int64_t now_ns) const {
    const uint64_t busy = busy_ns.load();
    const int64_t until = busy_until_ns.load();
    const uint64_t ahead = until > now_ns ? uint64_t(until - now_ns) : 0;
    return busy > ahead ? busy - ahead : 0;
  }
};

// The last kBusyHistory kernel intervals, as they started: what a sampler
// that wakes late still needs to say how busy each of its past intervals was
// (the simulated CUPTI's PM sampling). An entry is written start, then end;
// a reader that finds end < start (being written) or an index overwritten
// since it read `next` skips it.
inline constexpr uint32_t kBusyHistory = 8192;
struct BusyHistory {
  std::atomic<uint64_t> next;  // index of the next entry (entries [next - kBusyHistory, next) are kept)
  struct Interval {
    std::atomic<int64_t> start_ns;
    std::atomic<int64_t> end_ns;
  } entries[kBusyHistory];

  void add(int64_t start_ns, int64_t end_ns) {
    Interval& entry = entries[next.fetch_add(1) % kBusyHistory];
    entry.end_ns.store(-1);
    entry.start_ns.store(start_ns);
    entry.end_ns.store(end_ns);
  }
};

struct DeviceStateFile {
  std::atomic<uint64_t> total_bytes;  // the device's memory (0: no driver has run yet)
  BusyClock kernels;                  // any kernel running: NVML's GPU utilization
  BusyClock copies;                   // any copy or memset running: its memory utilization
  std::atomic<uint64_t> h2d_bytes;    // bytes copied host -> device (PCIe RX of the device)
  std::atomic<uint64_t> d2h_bytes;    // device -> host (PCIe TX)
  std::atomic<uint64_t> p2p_bytes;    // device -> other device (NVLink when it has links)
  // XID-style errors: a sticky fault (SIMGPU_FAULT_KERNELS) is XID 31
  // (GPU memory page fault). xid_count counts them; the last few are kept.
  std::atomic<uint64_t> xid_count;
  struct Xid {
    std::atomic<uint64_t> time_ns;
    std::atomic<uint64_t> code;
  } xids[8];
  DeviceStateSlot slots[kDeviceStateSlots];
  BusyHistory kernel_history;  // the same kernel intervals as `kernels`, one by one
};

}  // namespace simgpu
