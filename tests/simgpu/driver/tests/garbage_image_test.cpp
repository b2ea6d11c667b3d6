// Images that are not what they claim are refused with the documented error,
// never a crash: random bytes, truncated headers, headers pointing past mapped
// memory, corrupt compressed entries, unmapped pointers.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <vector>

#include "driver_test_support.h"

namespace {

using GarbageImageTest = DriverTest;

template <class T>
void put(std::vector<uint8_t>& bytes, size_t offset, T value) {
  if (bytes.size() < offset + sizeof(T)) bytes.resize(offset + sizeof(T));
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

// A page-aligned buffer whose next page is unmapped: reads past its end fault.
class GuardedPage {
 public:
  GuardedPage() {
    page_ = size_t(sysconf(_SC_PAGESIZE));
    void* mapped = mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    base_ = static_cast<uint8_t*>(mapped);
    munmap(base_ + page_, page_);
  }
  ~GuardedPage() { munmap(base_, page_); }
  // Copies `bytes` so that they end exactly at the unmapped page.
  const void* place_at_end(const std::vector<uint8_t>& bytes) {
    std::memcpy(base_ + page_ - bytes.size(), bytes.data(), bytes.size());
    return base_ + page_ - bytes.size();
  }

 private:
  size_t page_ = 0;
  uint8_t* base_ = nullptr;
};

CUresult load(const void* image) {
  CUmodule module = nullptr;
  CUresult result = cuModuleLoadData(&module, image);
  if (result == CUDA_SUCCESS) cuModuleUnload(module);
  return result;
}

std::vector<uint8_t> elf_header(uint16_t machine) {
  std::vector<uint8_t> elf(64, 0);
  std::memcpy(elf.data(),
              "\x7f"
              "ELF",
              4);
  elf[4] = 2;  // 64-bit
  elf[5] = 1;  // little-endian
  elf[6] = 1;
  put<uint16_t>(elf, 18, machine);
  put<uint16_t>(elf, 58, 64);  // section header entry size
  return elf;
}

TEST_F(GarbageImageTest, NullAndUnmappedPointersAreInvalidValues) {
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, load(nullptr));
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* gone = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, page);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, load(gone));
}

TEST_F(GarbageImageTest, RandomBytesAreInvalidImages) {
  std::mt19937 random(1234);
  for (int round = 0; round < 200; ++round) {
    std::vector<uint8_t> bytes(1 + random() % 512);
    for (uint8_t& byte : bytes) byte = uint8_t(random());
    bytes.push_back(0);
    CUresult result = load(bytes.data());
    EXPECT_TRUE(result == CUDA_ERROR_INVALID_IMAGE || result == CUDA_ERROR_INVALID_PTX) << cu_error_name(result);
  }
}

TEST_F(GarbageImageTest, ElfHeadersThatLieAreRefused) {
  GuardedPage guard;
  auto not_cuda = elf_header(62);  // x86-64
  put<uint16_t>(not_cuda, 60, 1);
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(guard.place_at_end(not_cuda)));

  auto no_sections = elf_header(190);
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(guard.place_at_end(no_sections)));

  auto far_sections = elf_header(190);
  put<uint64_t>(far_sections, 40, uint64_t(1) << 20);  // section headers 1 MiB away
  put<uint16_t>(far_sections, 60, 4);
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(guard.place_at_end(far_sections)));

  std::vector<uint8_t> truncated = {0x7f, 'E', 'L', 'F', 2, 1, 1};  // 7 bytes before the unmapped page
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(guard.place_at_end(truncated)));
}

TEST_F(GarbageImageTest, FatbinsThatLieAreRefused) {
  GuardedPage guard;
  std::vector<uint8_t> header;
  put<uint32_t>(header, 0, 0xBA55ED50u);
  put<uint16_t>(header, 4, 1);
  put<uint16_t>(header, 6, 16);
  put<uint64_t>(header, 8, uint64_t(1) << 20);  // claims 1 MiB of entries
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(guard.place_at_end(header)));

  // One zstd-flagged ELF entry whose payload is garbage.
  std::vector<uint8_t> corrupt;
  put<uint32_t>(corrupt, 0, 0xBA55ED50u);
  put<uint16_t>(corrupt, 4, 1);
  put<uint16_t>(corrupt, 6, 16);
  put<uint64_t>(corrupt, 8, 0x40 + 64);
  put<uint16_t>(corrupt, 16 + 0, 2);        // ELF
  put<uint32_t>(corrupt, 16 + 4, 0x40);     // entry header bytes
  put<uint64_t>(corrupt, 16 + 8, 64);       // payload bytes
  put<uint32_t>(corrupt, 16 + 16, 64);      // compressed bytes
  put<uint32_t>(corrupt, 16 + 28, 90);      // sm_90
  put<uint64_t>(corrupt, 16 + 40, 0x8011);  // zstd
  put<uint64_t>(corrupt, 16 + 56, 4096);    // uncompressed bytes
  corrupt.resize(16 + 0x40 + 64, 0xee);
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(corrupt.data()));
  put<uint64_t>(corrupt, 16 + 40, 0x2011);  // LZ4 instead
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(corrupt.data()));

  struct {
    int magic;
    int version;
    const void* data;
    void* unused;
  } wrapper{0x466243b1, 1, "not a fatbin at all", nullptr};
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, load(&wrapper));
}

TEST_F(GarbageImageTest, PtxWithoutTargetAndMissingFiles) {
  EXPECT_CU(CUDA_ERROR_INVALID_PTX, load(".version 9.0\n.visible .entry k()\n{\n ret;\n}\n"));
  CUmodule module = nullptr;
  EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&module, "/nonexistent/kernels.cubin"));
  CUlibrary library = nullptr;
  EXPECT_CU(CUDA_ERROR_INVALID_IMAGE,
            cuLibraryLoadData(&library, "\x01\x02\x03 nonsense", nullptr, nullptr, 0, nullptr, nullptr, 0));
}

}  // namespace
