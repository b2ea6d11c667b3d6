// Every way a CUDA program gets and gives back memory, in phases, with its
// own ledger of what it holds, so that a test can compare the profiler's
// memory model with what the program knows it did:
//
//   device   cudaMalloc / cudaFree (and one 1 MiB block never freed: a leak)
//   pitched  cudaMallocPitch, cudaMalloc3D
//   host     cudaMallocHost, cudaHostAlloc, cudaHostRegister
//   managed  cudaMallocManaged
//   pool     cudaMallocAsync / cudaFreeAsync on a stream, cudaMemPoolTrimTo
//   vmm      cuMemCreate / cuMemAddressReserve / cuMemMap / cuMemSetAccess,
//            reached through cudaGetDriverEntryPointByVersion as PyTorch's
//            expandable segments do; released while still mapped
//   peak     one more large block, held for --hold-ms
//   oom      two cudaMalloc calls far beyond the device (both must fail), and
//            one cudaMallocHost far beyond what any host can pin
//   release  everything but the leak
//
// Each phase ends with cudaMemGetInfo (a marker the trace records) and a line
//   phase <name>: allocated=<B> reserved=<B> pinned=<B> managed=<B>
// from the ledger: allocated is what the program holds on the device
// (blocks, stream-ordered allocations, VMM mappings); reserved is its blocks
// plus what the driver says the pool holds plus the VMM physical memory not
// yet both released and unmapped. The last line sums up the run.
//
// usage: memory_phases [--hold-ms 60] [--gap-ms 15]
#include <cuda.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "common/options.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;
using Holdings = std::map<const void*, size_t>;

size_t sum(const Holdings& holdings) {
  size_t total = 0;
  for (const auto& [pointer, bytes] : holdings) total += bytes;
  return total;
}

std::string joined(const std::vector<size_t>& values) {
  std::string text;
  for (size_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

struct Ledger {
  Holdings blocks;    // cudaMalloc, cudaMallocPitch, cudaMalloc3D
  Holdings pool;      // cudaMallocAsync
  Holdings mappings;  // VMM mappings
  Holdings pinned;    // cudaMallocHost, cudaHostAlloc, cudaHostRegister
  Holdings managed;
  size_t physical_held = 0;
  cudaMemPool_t memory_pool = nullptr;
  size_t peak = 0;
  std::vector<size_t> live_at_peak;
  size_t pinned_peak = 0;
  size_t managed_peak = 0;
  int failures = 0;
  size_t failed_request = 0;
  int pinned_failures = 0;
  size_t pinned_failed_request = 0;

  size_t allocated() const { return sum(blocks) + sum(pool) + sum(mappings); }
  size_t pool_reserved() const {
    cuuint64_t reserved = 0;
    if (memory_pool != nullptr)
      check_cuda(cudaMemPoolGetAttribute(memory_pool, cudaMemPoolAttrReservedMemCurrent, &reserved),
                 "cudaMemPoolGetAttribute");
    return reserved;
  }
  void changed() {
    if (allocated() > peak) {
      peak = allocated();
      live_at_peak.clear();
      for (const Holdings* h : {&blocks, &pool, &mappings})
        for (const auto& [pointer, bytes] : *h) live_at_peak.push_back(bytes);
      std::sort(live_at_peak.rbegin(), live_at_peak.rend());
    }
    pinned_peak = std::max(pinned_peak, sum(pinned));
    managed_peak = std::max(managed_peak, sum(managed));
  }
  void add(Holdings& where, const void* pointer, size_t bytes) {
    where[pointer] = bytes;
    changed();
  }
  void remove(Holdings& where, const void* pointer) {
    where.erase(pointer);
    changed();
  }
};

Ledger ledger;
long gap_ms = 15;
size_t device_total_bytes = 0;

// The only cudaMemGetInfo calls of the program: one marker per phase.
void end_phase(const char* name) {
  size_t free_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &device_total_bytes), "cudaMemGetInfo");
  std::printf("phase %s: allocated=%zu reserved=%zu pinned=%zu managed=%zu\n", name, ledger.allocated(),
              sum(ledger.blocks) + ledger.pool_reserved() + ledger.physical_held, sum(ledger.pinned),
              sum(ledger.managed));
  std::fflush(stdout);
  usleep(static_cast<useconds_t>(gap_ms) * 1000);
}

template <typename Function>
Function driver_function(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status{};
  check_cuda(cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &status),
             "cudaGetDriverEntryPointByVersion");
  if (function == nullptr || status != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "error: no driver entry point %s\n", name);
    std::exit(1);
  }
  return reinterpret_cast<Function>(function);
}

void check_driver(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  std::fprintf(stderr, "error: %s failed: CUresult %d\n", what, static_cast<int>(result));
  std::exit(1);
}

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
  ledger.add(ledger.blocks, p, bytes);
  return p;
}
void device_free(void* p) {
  check_cuda(cudaFree(p), "cudaFree");
  ledger.remove(ledger.blocks, p);
}

struct Vmm {
  decltype(&cuMemCreate) create = driver_function<decltype(&cuMemCreate)>("cuMemCreate");
  decltype(&cuMemRelease) release = driver_function<decltype(&cuMemRelease)>("cuMemRelease");
  decltype(&cuMemAddressReserve) reserve = driver_function<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  decltype(&cuMemAddressFree) address_free = driver_function<decltype(&cuMemAddressFree)>("cuMemAddressFree");
  decltype(&cuMemMap) map = driver_function<decltype(&cuMemMap)>("cuMemMap");
  decltype(&cuMemUnmap) unmap = driver_function<decltype(&cuMemUnmap)>("cuMemUnmap");
  decltype(&cuMemSetAccess) set_access = driver_function<decltype(&cuMemSetAccess)>("cuMemSetAccess");
};

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--hold-ms", "--gap-ms"});
  const long hold_ms = options.integer("--hold-ms", 60);
  gap_ms = options.integer("--gap-ms", 15);
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree(nullptr)");  // creates the context

  // device
  void* leaked = device_alloc(1 * kMiB);
  void* a = device_alloc(64 * kMiB);
  void* b = device_alloc(32 * kMiB);
  device_free(b);
  void* c = device_alloc(128 * kMiB);
  end_phase("device");

  // pitched
  void* pitched = nullptr;
  size_t pitch = 0;
  check_cuda(cudaMallocPitch(&pitched, &pitch, 1000, 1000), "cudaMallocPitch");
  ledger.add(ledger.blocks, pitched, pitch * 1000);
  cudaPitchedPtr volume{};
  check_cuda(cudaMalloc3D(&volume, make_cudaExtent(500, 100, 10)), "cudaMalloc3D");
  ledger.add(ledger.blocks, volume.ptr, volume.pitch * 100 * 10);
  end_phase("pitched");

  // host
  void* pinned = nullptr;
  void* mapped_host = nullptr;
  check_cuda(cudaMallocHost(&pinned, 16 * kMiB), "cudaMallocHost");
  ledger.add(ledger.pinned, pinned, 16 * kMiB);
  check_cuda(cudaHostAlloc(&mapped_host, 8 * kMiB, cudaHostAllocMapped), "cudaHostAlloc");
  ledger.add(ledger.pinned, mapped_host, 8 * kMiB);
  std::vector<char> pageable(4 * kMiB);
  check_cuda(cudaHostRegister(pageable.data(), pageable.size(), cudaHostRegisterDefault), "cudaHostRegister");
  ledger.add(ledger.pinned, pageable.data(), pageable.size());
  end_phase("host");

  // managed
  void* managed = nullptr;
  check_cuda(cudaMallocManaged(&managed, 8 * kMiB), "cudaMallocManaged");
  ledger.add(ledger.managed, managed, 8 * kMiB);
  end_phase("managed");

  // pool: three stream-ordered blocks, two freed; the pool keeps their
  // memory until a synchronization or a trim gives it back.
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check_cuda(cudaDeviceGetDefaultMemPool(&ledger.memory_pool, 0), "cudaDeviceGetDefaultMemPool");
  void* async_blocks[3] = {};
  for (void*& block : async_blocks) {
    check_cuda(cudaMallocAsync(&block, 10 * kMiB, stream), "cudaMallocAsync");
    ledger.add(ledger.pool, block, 10 * kMiB);
  }
  end_phase("pool-allocated");
  for (int i = 0; i < 2; ++i) {
    check_cuda(cudaFreeAsync(async_blocks[i], stream), "cudaFreeAsync");
    ledger.remove(ledger.pool, async_blocks[i]);
  }
  end_phase("pool-freed");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check_cuda(cudaMemPoolTrimTo(ledger.memory_pool, 0), "cudaMemPoolTrimTo");
  end_phase("pool-trimmed");

  // vmm: a growing segment of two 8 MiB chunks in one reserved range.
  Vmm vmm;
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  CUdeviceptr segment = 0;
  check_driver(vmm.reserve(&segment, 64 * kMiB, 0, 0, 0), "cuMemAddressReserve");
  CUmemGenericAllocationHandle chunks[2] = {};
  for (int i = 0; i < 2; ++i) {
    check_driver(vmm.create(&chunks[i], 8 * kMiB, &prop, 0), "cuMemCreate");
    ledger.physical_held += 8 * kMiB;
    const CUdeviceptr at = segment + i * 8 * kMiB;
    check_driver(vmm.map(at, 8 * kMiB, 0, chunks[i], 0), "cuMemMap");
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check_driver(vmm.set_access(at, 8 * kMiB, &access, 1), "cuMemSetAccess");
    ledger.add(ledger.mappings, reinterpret_cast<const void*>(at), 8 * kMiB);
    // Released at once, as expandable segments do: the mapping keeps it.
    check_driver(vmm.release(chunks[i]), "cuMemRelease");
  }
  end_phase("vmm");

  // peak
  void* d = device_alloc(256 * kMiB);
  end_phase("peak");
  usleep(static_cast<useconds_t>(hold_ms) * 1000);

  // oom: far beyond the device; not sticky.
  const size_t too_much = device_total_bytes * 4;
  for (int i = 0; i < 2; ++i) {
    void* never = nullptr;
    const cudaError_t status = cudaMalloc(&never, too_much);
    if (status != cudaErrorMemoryAllocation) {
      std::fprintf(stderr, "error: a %zu-byte cudaMalloc returned %s\n", too_much, cudaGetErrorName(status));
      return 1;
    }
    cudaGetLastError();
    ++ledger.failures;
    ledger.failed_request = too_much;
  }
  {
    const size_t petabyte = size_t{1} << 50;
    void* never = nullptr;
    const cudaError_t status = cudaMallocHost(&never, petabyte);
    if (status != cudaErrorMemoryAllocation) {
      std::fprintf(stderr, "error: a 1 PiB cudaMallocHost returned %s\n", cudaGetErrorName(status));
      return 1;
    }
    cudaGetLastError();
    ++ledger.pinned_failures;
    ledger.pinned_failed_request = petabyte;
  }
  end_phase("oom");

  // release everything but `leaked`
  device_free(d);
  check_driver(vmm.unmap(segment, 16 * kMiB), "cuMemUnmap");  // both mappings at once
  ledger.remove(ledger.mappings, reinterpret_cast<const void*>(segment));
  ledger.remove(ledger.mappings, reinterpret_cast<const void*>(segment + 8 * kMiB));
  ledger.physical_held = 0;
  check_driver(vmm.address_free(segment, 64 * kMiB), "cuMemAddressFree");
  check_cuda(cudaFreeAsync(async_blocks[2], stream), "cudaFreeAsync");
  ledger.remove(ledger.pool, async_blocks[2]);
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check_cuda(cudaMemPoolTrimTo(ledger.memory_pool, 0), "cudaMemPoolTrimTo");
  check_cuda(cudaFree(volume.ptr), "cudaFree");
  ledger.remove(ledger.blocks, volume.ptr);
  check_cuda(cudaFree(pitched), "cudaFree");
  ledger.remove(ledger.blocks, pitched);
  device_free(c);
  device_free(a);
  check_cuda(cudaFree(managed), "cudaFree");
  ledger.remove(ledger.managed, managed);
  check_cuda(cudaHostUnregister(pageable.data()), "cudaHostUnregister");
  ledger.remove(ledger.pinned, pageable.data());
  check_cuda(cudaFreeHost(mapped_host), "cudaFreeHost");
  ledger.remove(ledger.pinned, mapped_host);
  check_cuda(cudaFreeHost(pinned), "cudaFreeHost");
  ledger.remove(ledger.pinned, pinned);
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  end_phase("release");

  std::printf("memory_phases: peak_allocated=%zu live_at_peak=%s failures=%d failed_request=%zu leaked=%zu "
              "pinned_peak=%zu managed_peak=%zu pinned_failures=%d pinned_failed_request=%zu\n",
              ledger.peak, joined(ledger.live_at_peak).c_str(), ledger.failures, ledger.failed_request,
              ledger.blocks.count(leaked) ? ledger.blocks[leaked] : size_t{0}, ledger.pinned_peak,
              ledger.managed_peak, ledger.pinned_failures, ledger.pinned_failed_request);
  return 0;
}
