// Allocation, copies of every kind, memsets and pointer attributes: data that
// goes through the simulated device must come back byte for byte.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

std::vector<uint8_t> pattern(size_t bytes, uint8_t seed) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return data;
}

class RuntimeMemory : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(cudaGetLastError(), cudaSuccess); }
  void TearDown() override {
    for (void* pointer : device_allocations_) EXPECT_EQ(cudaFree(pointer), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
  void* device_buffer(size_t bytes) {
    void* pointer = nullptr;
    EXPECT_EQ(cudaMalloc(&pointer, bytes), cudaSuccess);
    device_allocations_.push_back(pointer);
    return pointer;
  }
  std::vector<void*> device_allocations_;
};

TEST_F(RuntimeMemory, ExplicitKindsRoundTripThroughTwoDeviceBuffers) {
  const size_t bytes = (1 << 20) + 3;
  auto source = pattern(bytes, 11);
  void* first = device_buffer(bytes);
  void* second = device_buffer(bytes);
  ASSERT_EQ(cudaMemcpy(first, source.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(second, first, bytes, cudaMemcpyDeviceToDevice), cudaSuccess);
  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpy(back.data(), second, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, source);
}

TEST_F(RuntimeMemory, HostToHostCopies) {
  auto source = pattern(4096, 3);
  std::vector<uint8_t> destination(4096);
  ASSERT_EQ(cudaMemcpy(destination.data(), source.data(), 4096, cudaMemcpyHostToHost), cudaSuccess);
  EXPECT_EQ(destination, source);
}

TEST_F(RuntimeMemory, DefaultKindWorksOutEachDirectionFromThePointers) {
  const size_t bytes = 64 * 1024;
  auto source = pattern(bytes, 5);
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, bytes), cudaSuccess);
  void* first = device_buffer(bytes);
  void* second = device_buffer(bytes);
  // pageable -> device, device -> device, device -> pinned, pinned -> pageable
  ASSERT_EQ(cudaMemcpy(first, source.data(), bytes, cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(second, first, bytes, cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(pinned, second, bytes, cudaMemcpyDefault), cudaSuccess);
  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpy(back.data(), pinned, bytes, cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(back, source);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

TEST_F(RuntimeMemory, MemsetWritesTheLowByteOverTheRange) {
  const size_t bytes = 10000;
  uint8_t* device = static_cast<uint8_t*>(device_buffer(bytes));
  ASSERT_EQ(cudaMemset(device, 0x1AB, bytes), cudaSuccess);
  ASSERT_EQ(cudaMemset(device + 100, 0x00, 50), cudaSuccess);
  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  std::vector<uint8_t> expected(bytes, 0xAB);
  std::fill(expected.begin() + 100, expected.begin() + 150, 0);
  EXPECT_EQ(back, expected);
}

TEST_F(RuntimeMemory, AsyncCopiesAndMemsetsOnTwoStreams) {
  const size_t bytes = 256 * 1024;
  auto first_source = pattern(bytes, 1);
  auto second_source = pattern(bytes, 2);
  cudaStream_t first_stream = nullptr;
  cudaStream_t second_stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&first_stream), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&second_stream, cudaStreamNonBlocking), cudaSuccess);
  uint8_t* first = static_cast<uint8_t*>(device_buffer(bytes));
  uint8_t* second = static_cast<uint8_t*>(device_buffer(bytes));
  std::vector<uint8_t> first_back(bytes);
  std::vector<uint8_t> second_back(bytes);
  ASSERT_EQ(
      cudaMemcpyAsync(first, first_source.data(), bytes, cudaMemcpyHostToDevice, first_stream),
      cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(first, 0x5C, 16, first_stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(first_back.data(), first, bytes, cudaMemcpyDeviceToHost, first_stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(second, second_source.data(), bytes, cudaMemcpyDefault, second_stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(second_back.data(), second, bytes, cudaMemcpyDefault, second_stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(first_stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(second_stream), cudaSuccess);
  std::fill(first_source.begin(), first_source.begin() + 16, 0x5C);
  EXPECT_EQ(first_back, first_source);
  EXPECT_EQ(second_back, second_source);
  EXPECT_EQ(cudaStreamDestroy(first_stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(second_stream), cudaSuccess);
}

TEST_F(RuntimeMemory, PitchedTwoDimensionalCopiesAndMemset) {
  const size_t width_bytes = 300;
  const size_t height = 7;
  void* device = nullptr;
  size_t pitch = 0;
  ASSERT_EQ(cudaMallocPitch(&device, &pitch, width_bytes, height), cudaSuccess);
  device_allocations_.push_back(device);
  ASSERT_GE(pitch, width_bytes);
  auto source = pattern(width_bytes * height, 9);
  ASSERT_EQ(cudaMemcpy2D(device, pitch, source.data(), width_bytes, width_bytes, height,
                         cudaMemcpyHostToDevice),
            cudaSuccess);
  // Clear a 10x2 block at column 20 of rows 3 and 4.
  uint8_t* block = static_cast<uint8_t*>(device) + 3 * pitch + 20;
  ASSERT_EQ(cudaMemset2D(block, pitch, 0, 10, 2), cudaSuccess);
  std::vector<uint8_t> back(width_bytes * height);
  ASSERT_EQ(cudaMemcpy2D(back.data(), width_bytes, device, pitch, width_bytes, height,
                         cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (size_t row = 3; row < 5; ++row) {
    std::fill_n(source.begin() + static_cast<std::ptrdiff_t>(row * width_bytes + 20), 10, 0);
  }
  EXPECT_EQ(back, source);
  EXPECT_EQ(
      cudaMemcpy2D(back.data(), 10, device, pitch, width_bytes, height, cudaMemcpyDeviceToHost),
      cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidPitchValue);
}

TEST_F(RuntimeMemory, Malloc3DGivesAPitchedPointerCoveringTheExtent) {
  cudaPitchedPtr pitched{};
  cudaExtent extent{100, 4, 3};  // width in bytes, height, depth
  ASSERT_EQ(cudaMalloc3D(&pitched, extent), cudaSuccess);
  device_allocations_.push_back(pitched.ptr);
  EXPECT_GE(pitched.pitch, extent.width);
  EXPECT_EQ(pitched.xsize, extent.width);
  EXPECT_EQ(pitched.ysize, extent.height);
  // The last byte of the last slice is addressable.
  uint8_t* last = static_cast<uint8_t*>(pitched.ptr) +
                  pitched.pitch * (extent.height * extent.depth - 1) + extent.width - 1;
  EXPECT_EQ(cudaMemset(last, 7, 1), cudaSuccess);
}

TEST_F(RuntimeMemory, ZeroByteMallocSucceedsWithNull) {
  void* pointer = reinterpret_cast<void*>(1);
  EXPECT_EQ(cudaMalloc(&pointer, 0), cudaSuccess);
  EXPECT_EQ(pointer, nullptr);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
}

TEST_F(RuntimeMemory, MemGetInfoTracksAllocations) {
  size_t free_before = 0;
  size_t total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  EXPECT_LE(free_before, total);
  const size_t bytes = 64 << 20;
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
  size_t free_during = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_during, &total), cudaSuccess);
  EXPECT_LE(free_during + bytes, free_before);
  ASSERT_EQ(cudaFree(device), cudaSuccess);
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_before);
}

TEST_F(RuntimeMemory, PointerAttributesTellMemoryKindsApart) {
  void* device = device_buffer(1024);
  void* pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned, 1024, cudaHostAllocDefault), cudaSuccess);
  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 1024, cudaMemAttachGlobal), cudaSuccess);
  std::vector<uint8_t> pageable(1024);
  int current_device = -1;
  ASSERT_EQ(cudaGetDevice(&current_device), cudaSuccess);

  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, device), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, current_device);
  EXPECT_EQ(attributes.devicePointer, device);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, static_cast<char*>(device) + 10), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);

  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pinned), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(attributes.hostPointer, pinned);

  ASSERT_EQ(cudaPointerGetAttributes(&attributes, managed), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);

  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pageable.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);

  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaFree(managed), cudaSuccess);
}

TEST_F(RuntimeMemory, RegisteredHostMemoryBecomesHostMemoryUntilUnregistered) {
  std::vector<uint8_t> buffer(8192);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaHostRegister(buffer.data(), buffer.size(), cudaHostRegisterDefault), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, buffer.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  ASSERT_EQ(cudaHostUnregister(buffer.data()), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, buffer.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);
}

TEST_F(RuntimeMemory, ManagedMemoryIsUsableFromHostAndAsCopySource) {
  const size_t bytes = 4096;
  uint8_t* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(reinterpret_cast<void**>(&managed), bytes), cudaSuccess);
  auto source = pattern(bytes, 21);
  std::memcpy(managed, source.data(), bytes);
  void* device = device_buffer(bytes);
  ASSERT_EQ(cudaMemcpy(device, managed, bytes, cudaMemcpyDefault), cudaSuccess);
  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, source);
  EXPECT_EQ(cudaFree(managed), cudaSuccess);
}

TEST_F(RuntimeMemory, StreamOrderedAllocationFromTheDefaultPool) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const size_t bytes = 32 * 1024;
  auto source = pattern(bytes, 33);
  void* first = nullptr;
  ASSERT_EQ(cudaMallocAsync(&first, bytes, stream), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  ASSERT_NE(pool, nullptr);
  void* second = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&second, bytes, pool, stream), cudaSuccess);
  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpyAsync(first, source.data(), bytes, cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(second, first, bytes, cudaMemcpyDeviceToDevice, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(back.data(), second, bytes, cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(first, stream), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(second, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(back, source);
  EXPECT_EQ(cudaMemPoolTrimTo(pool, 0), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeMemory, PeerCopyMovesDataBetweenDevices) {
  int device_count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&device_count), cudaSuccess);
  if (device_count < 2) GTEST_SKIP() << "needs two simulated devices";
  const size_t bytes = 8192;
  auto source = pattern(bytes, 44);
  void* on_zero = device_buffer(bytes);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  void* on_one = nullptr;
  ASSERT_EQ(cudaMalloc(&on_one, bytes), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(on_zero, source.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeer(on_one, 1, on_zero, 0, bytes), cudaSuccess);
  std::vector<uint8_t> back(bytes);
  ASSERT_EQ(cudaMemcpy(back.data(), on_one, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, source);
  // And back again, asynchronously, with peer access enabled.
  int can_access = 0;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can_access, 0, 1), cudaSuccess);
  if (can_access) EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  ASSERT_EQ(cudaMemset(on_zero, 0, bytes), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeerAsync(on_zero, 0, on_one, 1, bytes, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::fill(back.begin(), back.end(), 0);
  ASSERT_EQ(cudaMemcpy(back.data(), on_zero, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, source);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  if (can_access) EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaSuccess);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, on_one), cudaSuccess);
  EXPECT_EQ(attributes.device, 1);
  EXPECT_EQ(cudaFree(on_one), cudaSuccess);
}

}  // namespace
