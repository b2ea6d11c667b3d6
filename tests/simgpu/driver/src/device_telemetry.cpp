#include "device_telemetry.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "driver_state.h"
#include "simgpu_device_state.h"
#include "simgpu_tools.h"
#include "stream.h"

namespace simgpu {
namespace {

std::string state_directory() {
  const char* dir = std::getenv("SIMGPU_STATE_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  return "/dev/shm/simgpu-" + std::to_string(getuid());
}

bool process_alive(uint32_t pid) { return pid != 0 && (kill(pid_t(pid), 0) == 0 || errno == EPERM); }

}  // namespace

EnginePersonality& engine_personality() {
  static EnginePersonality personality;
  return personality;
}

void telemetry_open(Device& device) {
  const std::string dir = state_directory();
  mkdir(dir.c_str(), 0700);
  const std::string path = dir + "/" + engine_personality().state_file_prefix + std::to_string(device.physical);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  struct stat info;
  if (fstat(fd, &info) != 0 ||
      (info.st_size < off_t(sizeof(DeviceStateFile)) && ftruncate(fd, sizeof(DeviceStateFile)) != 0)) {
    close(fd);
    return;
  }
  void* mapped = mmap(nullptr, sizeof(DeviceStateFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) return;
  auto* file = static_cast<DeviceStateFile*>(mapped);
  file->total_bytes.store(device.total_bytes);
  const uint32_t self = uint32_t(getpid());
  for (DeviceStateSlot& slot : file->slots) {
    uint32_t owner = slot.pid.load();
    // A dead process's memory is free again, as the real driver frees it at exit.
    if ((owner == 0 || !process_alive(owner)) && slot.pid.compare_exchange_strong(owner, self)) {
      slot.used_bytes.store(0);
      device.telemetry_slot = &slot;
      break;
    }
  }
  device.telemetry = file;
}

void telemetry_memory(Device& device) {
  if (device.telemetry_slot != nullptr) device.telemetry_slot->used_bytes.store(device.used_bytes.load());
}

void telemetry_work(Device& device, const StreamOperation& op, int64_t start_ns, int64_t end_ns) {
  DeviceStateFile* file = device.telemetry;
  if (file == nullptr) return;
  switch (op.node.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      file->kernels.add(start_ns, end_ns);
      file->kernel_history.add(start_ns, end_ns);
      break;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
    case CU_GRAPH_NODE_TYPE_MEMSET:
      file->copies.add(start_ns, end_ns);
      if (op.tools.copy_kind == SIMGPU_TOOLS_COPY_HTOD) file->h2d_bytes.fetch_add(op.node.bytes);
      if (op.tools.copy_kind == SIMGPU_TOOLS_COPY_DTOH) file->d2h_bytes.fetch_add(op.node.bytes);
      if (op.tools.copy_kind == SIMGPU_TOOLS_COPY_PTOP) file->p2p_bytes.fetch_add(op.node.bytes);
      break;
    default:
      break;
  }
}

void telemetry_xid(Device& device, uint64_t code) {
  DeviceStateFile* file = device.telemetry;
  if (file == nullptr) return;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t index = file->xid_count.load();
  auto& entry = file->xids[index % 8];
  entry.time_ns.store(uint64_t(now.tv_sec) * 1'000'000'000ull + uint64_t(now.tv_nsec));
  entry.code.store(code);
  file->xid_count.fetch_add(1);
}

bool visible_devices(int device_count, int* physical, int* count, const char* text) {
  *count = 0;
  if (text == nullptr) {
    for (int i = 0; i < device_count; ++i) physical[(*count)++] = i;
    return true;
  }
  const char* cursor = text;
  while (*cursor != '\0' && *count < device_count) {
    char* end = nullptr;
    const long index = std::strtol(cursor, &end, 10);
    if (end == cursor || index < 0 || index >= device_count || (*end != ',' && *end != '\0')) break;
    bool repeated = false;
    for (int i = 0; i < *count; ++i) repeated |= physical[i] == int(index);
    if (repeated) break;
    physical[(*count)++] = int(index);
    cursor = *end == ',' ? end + 1 : end;
  }
  return true;
}

}  // namespace simgpu
