// Virtual memory management: physical memory from cuMemCreate counts toward the
// device (64 MiB here) until it is released and unmapped; mappings alias the
// same physical memory; access rights gate copies.
#include <cstring>
#include <vector>

#include "driver_test_support.h"

namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kDeviceBytes = 64 * kMiB;

class VmmTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    properties_.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    properties_.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    properties_.location.id = device_;
    ASSERT_CU_OK(cuMemGetAllocationGranularity(&granularity_, &properties_, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  }

  size_t used_bytes() {
    size_t free = 0, total = 0;
    EXPECT_EQ(CUDA_SUCCESS, cuMemGetInfo(&free, &total));
    return total - free;
  }

  void allow_access(CUdeviceptr address, size_t bytes) {
    CUmemAccessDesc access{};
    access.location = properties_.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    ASSERT_CU_OK(cuMemSetAccess(address, bytes, &access, 1));
  }

  CUmemAllocationProp properties_{};
  size_t granularity_ = 0;
};

TEST_F(VmmTest, CreateReserveMapUnmapReleaseAccounting) {
  ASSERT_EQ(2 * kMiB, granularity_);
  const size_t baseline = used_bytes();
  CUmemGenericAllocationHandle handle = 0;
  ASSERT_CU_OK(cuMemCreate(&handle, 8 * kMiB, &properties_, 0));
  EXPECT_EQ(baseline + 8 * kMiB, used_bytes()) << "physical memory counts from cuMemCreate";

  CUdeviceptr base = 0;
  ASSERT_CU_OK(cuMemAddressReserve(&base, 16 * kMiB, 0, 0, 0));
  EXPECT_EQ(0u, base % granularity_);
  EXPECT_EQ(baseline + 8 * kMiB, used_bytes()) << "address space costs no device memory";
  ASSERT_CU_OK(cuMemMap(base, 8 * kMiB, 0, handle, 0));
  ASSERT_CU_OK(cuMemMap(base + 8 * kMiB, 8 * kMiB, 0, handle, 0));  // the same memory again
  EXPECT_EQ(baseline + 8 * kMiB, used_bytes()) << "mapping twice does not allocate twice";

  std::vector<uint8_t> data(4096, 0x5a), back(4096, 0);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(base, data.data(), data.size())) << "no access granted yet";
  allow_access(base, 16 * kMiB);
  ASSERT_CU_OK(cuMemcpyHtoD(base + 100, data.data(), data.size()));
  ASSERT_CU_OK(cuMemcpyDtoH(back.data(), base + 8 * kMiB + 100, back.size()));
  EXPECT_EQ(data, back) << "both mappings show the same physical memory";

  CUmemGenericAllocationHandle retained = 0;
  ASSERT_CU_OK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(base + 4096)));
  EXPECT_EQ(handle, retained);
  ASSERT_CU_OK(cuMemRelease(retained));

  ASSERT_CU_OK(cuMemRelease(handle));
  EXPECT_EQ(baseline + 8 * kMiB, used_bytes()) << "still mapped, so still allocated";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAddressFree(base, 16 * kMiB)) << "still mapped";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemUnmap(base, 4 * kMiB)) << "only whole mappings unmap";
  ASSERT_CU_OK(cuMemUnmap(base, 8 * kMiB));
  EXPECT_EQ(baseline + 8 * kMiB, used_bytes());
  ASSERT_CU_OK(cuMemUnmap(base + 8 * kMiB, 8 * kMiB));
  EXPECT_EQ(baseline, used_bytes()) << "released and unmapped: gone";
  ASSERT_CU_OK(cuMemAddressFree(base, 16 * kMiB));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemRelease(handle)) << "released twice";
}

TEST_F(VmmTest, PhysicalMemoryBeyondTheDeviceFails) {
  CUmemGenericAllocationHandle first = 0, second = 0;
  ASSERT_CU_OK(cuMemCreate(&first, 48 * kMiB, &properties_, 0));
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemCreate(&second, 32 * kMiB, &properties_, 0));
  CUdeviceptr plain = 0;
  EXPECT_CU(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc(&plain, 32 * kMiB)) << "one budget for all kinds";
  ASSERT_CU_OK(cuMemRelease(first));
  ASSERT_CU_OK(cuMemCreate(&second, 32 * kMiB, &properties_, 0));
  ASSERT_CU_OK(cuMemRelease(second));
}

TEST_F(VmmTest, MisuseIsRejected) {
  CUmemGenericAllocationHandle handle = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemCreate(&handle, kMiB, &properties_, 0)) << "not a granularity multiple";
  ASSERT_CU_OK(cuMemCreate(&handle, 2 * kMiB, &properties_, 0));
  CUdeviceptr base = 0;
  ASSERT_CU_OK(cuMemAddressReserve(&base, 4 * kMiB, 0, 0, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base + 4096, 2 * kMiB, 0, handle, 0)) << "misaligned";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base, 4 * kMiB, 0, handle, 0)) << "larger than the allocation";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base + 4 * kMiB, 2 * kMiB, 0, handle, 0)) << "outside the reservation";
  ASSERT_CU_OK(cuMemMap(base, 2 * kMiB, 0, handle, 0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemMap(base, 2 * kMiB, 0, handle, 0)) << "already mapped";
  CUmemAllocationProp bad = properties_;
  bad.location.id = 99;
  size_t granularity = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE,
            cuMemGetAllocationGranularity(&granularity, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  ASSERT_CU_OK(cuMemUnmap(base, 2 * kMiB));
  ASSERT_CU_OK(cuMemRelease(handle));
  ASSERT_CU_OK(cuMemAddressFree(base, 4 * kMiB));
}

}  // namespace
