// Copies and memsets really move data, in every direction, synchronously and
// on streams, between devices, in 2D, and with every memset width.
#include <cstring>
#include <numeric>
#include <vector>

#include "driver_test_support.h"

namespace {

class CopyTest : public DriverTest {
 protected:
  std::vector<uint8_t> pattern(size_t bytes, uint8_t seed) {
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = uint8_t(seed + i * 7);
    return data;
  }
};

TEST_F(CopyTest, HostToDeviceToHostRoundTripsPageableMemory) {
  const size_t bytes = 1 << 20;
  auto source = pattern(bytes, 3);
  std::vector<uint8_t> back(bytes, 0);
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, bytes));
  ASSERT_CU_OK(cuMemcpyHtoD(device, source.data(), bytes));
  ASSERT_CU_OK(cuMemcpyDtoH(back.data(), device, bytes));
  EXPECT_EQ(source, back);
  ASSERT_CU_OK(cuMemFree(device));
}

TEST_F(CopyTest, DeviceToDeviceCopiesWithinAndAcrossAllocations) {
  const size_t bytes = 4096;
  auto source = pattern(bytes, 11);
  CUdeviceptr a = 0, b = 0;
  ASSERT_CU_OK(cuMemAlloc(&a, bytes));
  ASSERT_CU_OK(cuMemAlloc(&b, bytes));
  ASSERT_CU_OK(cuMemcpyHtoD(a, source.data(), bytes));
  ASSERT_CU_OK(cuMemcpyDtoD(b, a, bytes));
  ASSERT_CU_OK(cuMemcpyDtoD(b + 100, a, 50));  // into the middle of an allocation
  std::vector<uint8_t> back(bytes);
  ASSERT_CU_OK(cuMemcpyDtoH(back.data(), b, bytes));
  auto expected = source;
  std::memcpy(expected.data() + 100, source.data(), 50);
  EXPECT_EQ(expected, back);
}

TEST_F(CopyTest, UnifiedCopyInfersEveryDirection) {
  const size_t bytes = 8192;
  auto source = pattern(bytes, 5);
  std::vector<uint8_t> host_copy(bytes), back(bytes);
  CUdeviceptr a = 0, b = 0;
  ASSERT_CU_OK(cuMemAlloc(&a, bytes));
  ASSERT_CU_OK(cuMemAlloc(&b, bytes));
  auto host = [](void* p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); };
  ASSERT_CU_OK(cuMemcpy(a, host(source.data()), bytes));                     // host -> device
  ASSERT_CU_OK(cuMemcpy(b, a, bytes));                                       // device -> device
  ASSERT_CU_OK(cuMemcpy(host(back.data()), b, bytes));                       // device -> host
  ASSERT_CU_OK(cuMemcpy(host(host_copy.data()), host(back.data()), bytes));  // host -> host
  EXPECT_EQ(source, host_copy);
}

TEST_F(CopyTest, AsyncCopiesOnAStreamFromPinnedMemory) {
  const size_t bytes = 1 << 16;
  void* pinned_in = nullptr;
  void* pinned_out = nullptr;
  ASSERT_CU_OK(cuMemAllocHost(&pinned_in, bytes));
  ASSERT_CU_OK(cuMemHostAlloc(&pinned_out, bytes, CU_MEMHOSTALLOC_PORTABLE));
  auto source = pattern(bytes, 9);
  std::memcpy(pinned_in, source.data(), bytes);
  std::memset(pinned_out, 0, bytes);
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr a = 0, b = 0;
  ASSERT_CU_OK(cuMemAlloc(&a, bytes));
  ASSERT_CU_OK(cuMemAlloc(&b, bytes));
  ASSERT_CU_OK(cuMemcpyHtoDAsync(a, pinned_in, bytes, stream));
  ASSERT_CU_OK(cuMemcpyDtoDAsync(b, a, bytes, stream));
  ASSERT_CU_OK(cuMemcpyDtoHAsync(pinned_out, b, bytes, stream));
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(0, std::memcmp(pinned_out, source.data(), bytes));
  ASSERT_CU_OK(cuStreamDestroy(stream));
  ASSERT_CU_OK(cuMemFreeHost(pinned_in));
  ASSERT_CU_OK(cuMemFreeHost(pinned_out));
}

TEST_F(CopyTest, AsyncCopyWithPageableMemoryHasCopiedWhenItReturns) {
  // Documented: with pageable memory the async copy may be synchronous; the
  // simulator makes it so, which lets the caller reuse the buffer at once.
  const size_t bytes = 1 << 16;
  auto source = pattern(bytes, 21);
  std::vector<uint8_t> back(bytes, 0);
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, bytes));
  ASSERT_CU_OK(cuMemcpyHtoDAsync(device, source.data(), bytes, nullptr));
  std::fill(source.begin(), source.end(), 0);  // must not affect the device copy
  ASSERT_CU_OK(cuMemcpyDtoHAsync(back.data(), device, bytes, nullptr));
  EXPECT_EQ(pattern(bytes, 21), back);
}

TEST_F(CopyTest, PeerCopiesBetweenDevices) {
  int count = 0;
  ASSERT_CU_OK(cuDeviceGetCount(&count));
  ASSERT_GE(count, 2) << "the default simulated machine has two devices";
  CUdevice other_device = 1;
  CUcontext other = nullptr;
  ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&other, other_device));
  int can_access = 0;
  ASSERT_CU_OK(cuDeviceCanAccessPeer(&can_access, device_, other_device));
  EXPECT_EQ(1, can_access);
  ASSERT_CU_OK(cuCtxEnablePeerAccess(other, 0));
  EXPECT_CU(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, cuCtxEnablePeerAccess(other, 0));

  const size_t bytes = 1 << 16;
  auto source = pattern(bytes, 33);
  CUdeviceptr on_first = 0, on_second = 0;
  ASSERT_CU_OK(cuMemAlloc(&on_first, bytes));
  ASSERT_CU_OK(cuCtxPushCurrent(other));
  ASSERT_CU_OK(cuMemAlloc(&on_second, bytes));
  ASSERT_CU_OK(cuCtxPopCurrent(nullptr));
  ASSERT_CU_OK(cuMemcpyHtoD(on_first, source.data(), bytes));
  ASSERT_CU_OK(cuMemcpyPeer(on_second, other, on_first, context_, bytes));
  std::vector<uint8_t> back(bytes);
  ASSERT_CU_OK(cuMemcpyDtoH(back.data(), on_second, bytes));
  EXPECT_EQ(source, back);

  // And back asynchronously, into a fresh buffer.
  CUdeviceptr second_first = 0;
  ASSERT_CU_OK(cuMemAlloc(&second_first, bytes));
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  ASSERT_CU_OK(cuMemcpyPeerAsync(second_first, context_, on_second, other, bytes, stream));
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  std::fill(back.begin(), back.end(), 0);
  ASSERT_CU_OK(cuMemcpyDtoH(back.data(), second_first, bytes));
  EXPECT_EQ(source, back);
  ASSERT_CU_OK(cuCtxDisablePeerAccess(other));
  ASSERT_CU_OK(cuDevicePrimaryCtxRelease(other_device));
}

TEST_F(CopyTest, MemsetWritesEveryWidthAndPattern) {
  const size_t count = 1024;
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, count * 4));
  std::vector<uint8_t> bytes(count * 4);
  ASSERT_CU_OK(cuMemsetD8(device, 0xab, count * 4));
  ASSERT_CU_OK(cuMemcpyDtoH(bytes.data(), device, bytes.size()));
  EXPECT_EQ(std::vector<uint8_t>(count * 4, 0xab), bytes);

  std::vector<uint16_t> halves(count * 2);
  ASSERT_CU_OK(cuMemsetD16(device, 0x1234, count * 2));
  ASSERT_CU_OK(cuMemcpyDtoH(halves.data(), device, count * 4));
  EXPECT_EQ(std::vector<uint16_t>(count * 2, 0x1234), halves);

  std::vector<uint32_t> words(count);
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  ASSERT_CU_OK(cuMemsetD32Async(device, 0xdeadbeef, count, stream));
  ASSERT_CU_OK(cuMemsetD8Async(device + 4, 0x00, 4, stream));  // second word zeroed after, in stream order
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  ASSERT_CU_OK(cuMemcpyDtoH(words.data(), device, count * 4));
  std::vector<uint32_t> expected(count, 0xdeadbeef);
  expected[1] = 0;
  EXPECT_EQ(expected, words);

  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(device + 2, 1, 4)) << "misaligned 32-bit memset";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD8(device, 1, count * 4 + 1)) << "past the allocation";
}

TEST_F(CopyTest, TwoDimensionalCopyAndMemsetHonourPitches) {
  const size_t width = 48, height = 5;
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  ASSERT_CU_OK(cuMemAllocPitch(&pitched, &pitch, width, height, 4));
  ASSERT_GE(pitch, width);
  ASSERT_CU_OK(cuMemsetD2D8(pitched, pitch, 0x11, pitch, height));  // whole rows, padding too

  std::vector<uint8_t> host(width * height);
  std::iota(host.begin(), host.end(), uint8_t(0));
  CUDA_MEMCPY2D up{};
  up.srcMemoryType = CU_MEMORYTYPE_HOST;
  up.srcHost = host.data();
  up.srcPitch = width;
  up.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  up.dstDevice = pitched;
  up.dstPitch = pitch;
  up.WidthInBytes = width;
  up.Height = height;
  ASSERT_CU_OK(cuMemcpy2D(&up));

  std::vector<uint8_t> raw(pitch * height);
  ASSERT_CU_OK(cuMemcpyDtoH(raw.data(), pitched, raw.size()));
  for (size_t row = 0; row < height; ++row) {
    for (size_t column = 0; column < pitch; ++column) {
      uint8_t expected = column < width ? host[row * width + column] : 0x11;
      ASSERT_EQ(expected, raw[row * pitch + column]) << "row " << row << " column " << column;
    }
  }

  ASSERT_CU_OK(cuMemsetD2D32(pitched, pitch, 0x01020304, 2, height));  // first 8 bytes of each row
  ASSERT_CU_OK(cuMemcpyDtoH(raw.data(), pitched, raw.size()));
  for (size_t row = 0; row < height; ++row) {
    uint32_t first = 0;
    std::memcpy(&first, raw.data() + row * pitch + 4, 4);
    EXPECT_EQ(0x01020304u, first);
    EXPECT_EQ(host[row * width + 8], raw[row * pitch + 8]);
  }
}

TEST_F(CopyTest, CopiesToUnknownDevicePointersFail) {
  std::vector<uint8_t> host(64);
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, 64));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(device + 32, host.data(), 64)) << "overruns the allocation";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
            cuMemcpyHtoD(CUdeviceptr(reinterpret_cast<uintptr_t>(host.data())), host.data(), 8))
      << "a pageable host address is not a device pointer";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(host.data(), 0, 8));
  EXPECT_CU_OK(cuMemcpyHtoD(device, host.data(), 0)) << "zero bytes is a no-op";
}

}  // namespace
