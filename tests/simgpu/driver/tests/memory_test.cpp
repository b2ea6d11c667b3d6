// Device memory accounting against the configured size (64 MiB for this test,
// SIMGPU_DEVICE_MEMORY_MIB), the documented failures, host memory kinds,
// pointer attributes and stream-ordered pool allocations.
#include <cstring>
#include <vector>

#include "timing_kernels.h"

namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kDeviceBytes = 64 * kMiB;

class MemoryTest : public TimingTest {
 protected:
  size_t free_bytes() {
    size_t free = 0, total = 0;
    EXPECT_EQ(CUDA_SUCCESS, cuMemGetInfo(&free, &total));
    EXPECT_EQ(kDeviceBytes, total);
    return free;
  }
};

TEST_F(MemoryTest, AllocationsBeyondTheDeviceFailAndFreedMemoryComesBack) {
  size_t total = 0;
  ASSERT_CU_OK(cuDeviceTotalMem(&total, device_));
  ASSERT_EQ(kDeviceBytes, total);
  const size_t initially_free = free_bytes();
  CUdeviceptr too_big = 0;
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&too_big, kDeviceBytes + 1));

  CUdeviceptr first = 0, second = 0;
  ASSERT_CU_OK(cuMemAlloc(&first, 40 * kMiB));
  EXPECT_EQ(initially_free - 40 * kMiB, free_bytes());
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&second, 40 * kMiB));
  EXPECT_EQ(initially_free - 40 * kMiB, free_bytes()) << "a failed allocation takes nothing";
  ASSERT_CU_OK(cuMemFree(first));
  EXPECT_EQ(initially_free, free_bytes());
  ASSERT_CU_OK(cuMemAlloc(&second, 40 * kMiB));
  ASSERT_CU_OK(cuMemFree(second));

  // Small allocations are charged in 512-byte units.
  CUdeviceptr small = 0;
  ASSERT_CU_OK(cuMemAlloc(&small, 1));
  EXPECT_EQ(initially_free - 512, free_bytes());
  ASSERT_CU_OK(cuMemFree(small));
  EXPECT_EQ(initially_free, free_bytes());
}

TEST_F(MemoryTest, FreeingTwiceOrFreeingGarbageFailsCleanly) {
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, 4096));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(device + 16)) << "not the start of an allocation";
  ASSERT_CU_OK(cuMemFree(device));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(device)) << "second free";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(0x1234));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&device, 0));
  int host_variable = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(&host_variable));
}

TEST_F(MemoryTest, FreeWaitsForQueuedWorkOnTheDevice) {
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, 4096));
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  ASSERT_CU_OK(cuMemsetD8Async(device, 7, 4096, stream));  // touches the memory after the kernel
  CUevent done = record(stream);
  ASSERT_CU_OK(cuMemFree(device));
  EXPECT_CU_OK(cuEventQuery(done)) << "cuMemFree returned before the queued memset ran";
}

TEST_F(MemoryTest, HostMemoryKindsAreToldApartByPointerAttributes) {
  void* pinned = nullptr;
  ASSERT_CU_OK(cuMemHostAlloc(&pinned, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
  std::vector<uint8_t> pageable(8192);
  ASSERT_CU_OK(cuMemHostRegister(pageable.data(), 4096, CU_MEMHOSTREGISTER_PORTABLE));
  CUdeviceptr device = 0, managed = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, 4096));
  ASSERT_CU_OK(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL));
  std::vector<uint8_t> unknown(64);

  auto memory_type = [](const void* p) {
    unsigned type = 0;
    CUresult result = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr(p));
    return result == CUDA_SUCCESS ? int(type) : -int(result);
  };
  EXPECT_EQ(CU_MEMORYTYPE_HOST, memory_type(pinned));
  EXPECT_EQ(CU_MEMORYTYPE_HOST, memory_type(pageable.data() + 100)) << "inside the registered range";
  EXPECT_EQ(-int(CUDA_ERROR_INVALID_VALUE), memory_type(pageable.data() + 5000)) << "past the registered range";
  EXPECT_EQ(CU_MEMORYTYPE_DEVICE, memory_type(reinterpret_cast<void*>(device)));
  EXPECT_EQ(CU_MEMORYTYPE_DEVICE, memory_type(reinterpret_cast<void*>(managed)));
  EXPECT_EQ(-int(CUDA_ERROR_INVALID_VALUE), memory_type(unknown.data()));

  bool is_managed = false;
  ASSERT_CU_OK(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
  EXPECT_TRUE(is_managed);
  std::memset(reinterpret_cast<void*>(managed), 5, 16);  // managed memory is host-accessible

  // cuPointerGetAttributes reports unknown pointers without failing.
  unsigned type = 99;
  CUcontext context = reinterpret_cast<CUcontext>(1);
  unsigned long long buffer_id = 0, other_buffer_id = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_CONTEXT,
                                      CU_POINTER_ATTRIBUTE_BUFFER_ID};
  void* data[] = {&type, &context, &buffer_id};
  ASSERT_CU_OK(cuPointerGetAttributes(3, attributes, data, CUdeviceptr(unknown.data())));
  EXPECT_EQ(0u, type);
  EXPECT_EQ(nullptr, context);
  ASSERT_CU_OK(cuPointerGetAttributes(3, attributes, data, device));
  EXPECT_EQ(unsigned(CU_MEMORYTYPE_DEVICE), type);
  EXPECT_EQ(context_, context);
  void* other_data[] = {&type, &context, &other_buffer_id};
  ASSERT_CU_OK(cuPointerGetAttributes(3, attributes, other_data, managed));
  EXPECT_NE(buffer_id, other_buffer_id);

  unsigned flags = 0;
  ASSERT_CU_OK(cuMemHostGetFlags(&flags, pinned));
  EXPECT_EQ(unsigned(CU_MEMHOSTALLOC_DEVICEMAP), flags);
  CUdeviceptr mapped = 0;
  ASSERT_CU_OK(cuMemHostGetDevicePointer(&mapped, pinned, 0));
  EXPECT_EQ(CUdeviceptr(pinned), mapped) << "unified addressing";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemHostGetDevicePointer(&mapped, unknown.data(), 0));

  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister(pageable.data() + 2048, 4096, 0));
  ASSERT_CU_OK(cuMemHostUnregister(pageable.data()));
  EXPECT_CU(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(pageable.data()));
  ASSERT_CU_OK(cuMemFreeHost(pinned));
  ASSERT_CU_OK(cuMemFree(managed));
  ASSERT_CU_OK(cuMemFree(device));
}

TEST_F(MemoryTest, ManagedAndPinnedMemoryDoNotUseDeviceMemory) {
  const size_t before = free_bytes();
  CUdeviceptr managed = 0;
  void* pinned = nullptr;
  ASSERT_CU_OK(cuMemAllocManaged(&managed, 48 * kMiB, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU_OK(cuMemAllocHost(&pinned, 48 * kMiB));
  EXPECT_EQ(before, free_bytes());
  ASSERT_CU_OK(cuMemFree(managed));
  ASSERT_CU_OK(cuMemFreeHost(pinned));
}

// meson.build sets SIMGPU_PINNED_MEMORY_MIB=128 for this test.
TEST_F(MemoryTest, PinningMoreHostMemoryThanTheHostAllowsFailsAndFreedPinnedMemoryComesBack) {
  void* first = nullptr;
  void* second = nullptr;
  std::vector<char> pageable(64 * kMiB);
  ASSERT_CU_OK(cuMemAllocHost(&first, 100 * kMiB));
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemHostAlloc(&second, 64 * kMiB, CU_MEMHOSTALLOC_PORTABLE));
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemHostRegister(pageable.data(), pageable.size(), 0));
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocHost(&second, 200 * kMiB));
  ASSERT_CU_OK(cuMemFreeHost(first));
  ASSERT_CU_OK(cuMemHostAlloc(&second, 64 * kMiB, CU_MEMHOSTALLOC_PORTABLE));
  ASSERT_CU_OK(cuMemHostRegister(pageable.data(), pageable.size(), 0));  // exactly the limit
  ASSERT_CU_OK(cuMemHostUnregister(pageable.data()));
  ASSERT_CU_OK(cuMemFreeHost(second));
  ASSERT_CU_OK(cuMemAllocHost(&first, 128 * kMiB));
  ASSERT_CU_OK(cuMemFreeHost(first));
}

TEST_F(MemoryTest, PrefetchAndAdviceApplyToManagedMemoryOnly) {
  CUdeviceptr managed = 0, device = 0;
  ASSERT_CU_OK(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL));
  ASSERT_CU_OK(cuMemAlloc(&device, 4096));
  CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, device_};
  EXPECT_CU_OK(cuMemPrefetchAsync(managed, 4096, location, 0, nullptr));
  EXPECT_CU_OK(cuMemAdvise(managed, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, location));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchAsync(device, 4096, location, 0, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPrefetchAsync(managed, 8192, location, 0, nullptr));
  ASSERT_CU_OK(cuStreamSynchronize(nullptr));
  ASSERT_CU_OK(cuMemFree(managed));
  ASSERT_CU_OK(cuMemFree(device));
}

TEST_F(MemoryTest, AddressRangeFindsTheAllocation) {
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, 10000));
  CUdeviceptr base = 0;
  size_t size = 0;
  ASSERT_CU_OK(cuMemGetAddressRange(&base, &size, device + 9999));
  EXPECT_EQ(device, base);
  EXPECT_EQ(10000u, size);
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuMemGetAddressRange(&base, &size, device + 10000 + (1 << 20)));
  ASSERT_CU_OK(cuMemFree(device));
}

TEST_F(MemoryTest, StreamOrderedAllocationsUseTheDefaultPool) {
  const size_t before = free_bytes();
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  CUmemoryPool pool = nullptr;
  ASSERT_CU_OK(cuDeviceGetDefaultMemPool(&pool, device_));
  CUdeviceptr block = 0;
  ASSERT_CU_OK(cuMemAllocAsync(&block, 8 * kMiB, stream));
  EXPECT_EQ(before - 8 * kMiB, free_bytes());
  CUmemoryPool owner = nullptr;
  ASSERT_CU_OK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, block));
  EXPECT_EQ(pool, owner);
  ASSERT_CU_OK(cuMemsetD8Async(block, 1, 8 * kMiB, stream));

  // Freed in stream order; with the default release threshold (0) the pool
  // gives the memory back at the next synchronization.
  ASSERT_CU_OK(cuMemFreeAsync(block, stream));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(block, stream)) << "already freed";
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(before, free_bytes());

  // With a high threshold the pool keeps the memory reserved and reuses it.
  cuuint64_t threshold = 32 * kMiB;
  ASSERT_CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  ASSERT_CU_OK(cuMemAllocAsync(&block, 8 * kMiB, stream));
  ASSERT_CU_OK(cuMemFreeAsync(block, stream));
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  cuuint64_t reserved = 0, used = 0;
  ASSERT_CU_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
  ASSERT_CU_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT_EQ(8 * kMiB, reserved);
  EXPECT_EQ(0u, used);
  EXPECT_EQ(before - 8 * kMiB, free_bytes()) << "reserved pool memory still occupies the device";
  CUdeviceptr again = 0;
  ASSERT_CU_OK(cuMemAllocAsync(&again, 8 * kMiB, stream));
  ASSERT_CU_OK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved));
  EXPECT_EQ(8 * kMiB, reserved) << "reused, not reserved anew";
  ASSERT_CU_OK(cuMemFreeAsync(again, stream));
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  ASSERT_CU_OK(cuMemPoolTrimTo(pool, 0));
  EXPECT_EQ(before, free_bytes());

  // A pool allocation that does not fit fails like any other.
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemAllocAsync(&block, kDeviceBytes + kMiB, stream));
  threshold = 0;
  ASSERT_CU_OK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
}

TEST_F(MemoryTest, ExplicitPoolsAllocateFromTheirDevice) {
  CUmemPoolProps properties{};
  properties.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  properties.location.id = device_;
  CUmemoryPool pool = nullptr;
  ASSERT_CU_OK(cuMemPoolCreate(&pool, &properties));
  const size_t before = free_bytes();
  CUdeviceptr block = 0;
  ASSERT_CU_OK(cuMemAllocFromPoolAsync(&block, kMiB, pool, nullptr));
  EXPECT_EQ(before - kMiB, free_bytes());
  ASSERT_CU_OK(cuMemFreeAsync(block, nullptr));
  ASSERT_CU_OK(cuStreamSynchronize(nullptr));
  EXPECT_EQ(before, free_bytes());
  ASSERT_CU_OK(cuMemPoolDestroy(pool));
  CUmemoryPool default_pool = nullptr;
  ASSERT_CU_OK(cuDeviceGetDefaultMemPool(&default_pool, device_));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemPoolDestroy(default_pool));
}

TEST_F(MemoryTest, ReleasingThePrimaryContextFreesItsMemory) {
  const size_t before = free_bytes();
  CUdeviceptr leaked = 0;
  ASSERT_CU_OK(cuMemAlloc(&leaked, 16 * kMiB));
  EXPECT_EQ(before - 16 * kMiB, free_bytes());
  ASSERT_CU_OK(cuDevicePrimaryCtxReset(device_));
  EXPECT_EQ(before, free_bytes());
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(leaked)) << "freed with the context";
}

}  // namespace
