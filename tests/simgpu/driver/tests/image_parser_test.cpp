// Unit tests of the image parsers (cubin.cpp, fatbin.cpp, lz4_block.cpp,
// ptx.cpp, image_loader.cpp) on real nvcc 13 output generated at build time.
// Built with AddressSanitizer: the corruption rounds prove that no malformed
// image makes a parser read outside its input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "cubin.h"
#include "fatbin.h"
#include "image_loader.h"
#include "ptx.h"

namespace {

using namespace simgpu;

std::vector<uint8_t> read_image(const std::string& name) {
  const char* dir = std::getenv("SIMGPU_TEST_IMAGES_DIR");
  std::ifstream file(std::string(dir ? dir : ".") + "/" + name, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

const KernelInfo* kernel(const ModuleImage& image, const std::string& name) {
  for (const KernelInfo& k : image.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const VariableInfo* variable(const ModuleImage& image, const std::string& name) {
  for (const VariableInfo& v : image.variables) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

ModuleImage parse_cubin_file(const std::string& name) {
  auto bytes = read_image(name);
  ModuleImage image;
  std::string error;
  EXPECT_TRUE(parse_cubin(bytes.data(), bytes.size(), image, error)) << name << ": " << error;
  return image;
}

std::vector<FatbinEntry> parse_fatbin_file(const std::string& name) {
  auto bytes = read_image(name);
  std::vector<FatbinEntry> entries;
  std::string error;
  EXPECT_EQ(bytes.size(), fatbin_container_bytes(bytes.data())) << name;
  EXPECT_TRUE(parse_fatbin(bytes.data(), bytes.size(), entries, error)) << name << ": " << error;
  return entries;
}

const FatbinEntry* entry(const std::vector<FatbinEntry>& entries, FatbinEntryKind kind, int arch) {
  for (const FatbinEntry& e : entries) {
    if (e.kind == kind && e.sm_arch == arch) return &e;
  }
  return nullptr;
}

TEST(Cubin, KernelsParametersAndVariables) {
  ModuleImage image = parse_cubin_file("test_kernels.sm90.cubin");
  EXPECT_EQ(90, image.sm_arch);
  EXPECT_EQ(5u, image.kernels.size());
  const KernelInfo* add_one = kernel(image, "add_one");
  ASSERT_NE(nullptr, add_one);
  EXPECT_EQ(12u, add_one->parameter_bytes);
  ASSERT_EQ(2u, add_one->parameters.size());
  EXPECT_EQ(0u, add_one->parameters[0].offset);
  EXPECT_EQ(8u, add_one->parameters[0].bytes);
  EXPECT_EQ(8u, add_one->parameters[1].offset);
  EXPECT_EQ(4u, add_one->parameters[1].bytes);
  EXPECT_GT(add_one->registers, 0u);
  EXPECT_EQ(0u, add_one->max_threads_per_block);
  ASSERT_NE(nullptr, kernel(image, "_Z5scaleIfEvPT_S0_i"));
  ASSERT_NE(nullptr, kernel(image, "_Z5scaleIdEvPT_S0_i"));
  const KernelInfo* bounded = kernel(image, "bounded");
  ASSERT_NE(nullptr, bounded);
  EXPECT_EQ(128u, bounded->max_threads_per_block);
  EXPECT_GE(bounded->static_shared_bytes, 512u);
  const KernelInfo* empty = kernel(image, "empty_kernel");
  ASSERT_NE(nullptr, empty);
  EXPECT_EQ(0u, empty->parameter_bytes);

  const VariableInfo* counter = variable(image, "initialized_counter");
  ASSERT_NE(nullptr, counter);
  ASSERT_EQ(4u, counter->initial_value.size());
  int initial = 0;
  std::memcpy(&initial, counter->initial_value.data(), 4);
  EXPECT_EQ(42, initial);
  const VariableInfo* buffer = variable(image, "zeroed_buffer");
  ASSERT_NE(nullptr, buffer);
  EXPECT_EQ(1024u, buffer->bytes);
  EXPECT_TRUE(buffer->initial_value.empty());
  EXPECT_FALSE(buffer->managed);
  ASSERT_NE(nullptr, variable(image, "managed_value"));
  EXPECT_TRUE(variable(image, "managed_value")->managed);

  EXPECT_EQ(80, parse_cubin_file("test_kernels.sm80.cubin").sm_arch);
}

TEST(Cubin, ParameterLayoutAgreesWithThePtx) {
  // Two independent sources: .nv.info records of the cubin, .param lists of the PTX.
  ModuleImage from_cubin = parse_cubin_file("test_kernels.sm90.cubin");
  auto text = read_image("test_kernels.sm90.ptx");
  text.push_back(0);
  ModuleImage from_ptx;
  std::string error;
  ASSERT_TRUE(parse_ptx(reinterpret_cast<const char*>(text.data()), from_ptx, error)) << error;
  EXPECT_EQ(90, from_ptx.sm_arch);
  ASSERT_EQ(from_cubin.kernels.size(), from_ptx.kernels.size());
  for (const KernelInfo& compiled : from_cubin.kernels) {
    const KernelInfo* declared = kernel(from_ptx, compiled.name);
    ASSERT_NE(nullptr, declared) << compiled.name;
    EXPECT_EQ(compiled.parameter_bytes, declared->parameter_bytes) << compiled.name;
    ASSERT_EQ(compiled.parameters.size(), declared->parameters.size()) << compiled.name;
    for (size_t i = 0; i < compiled.parameters.size(); ++i) {
      EXPECT_EQ(compiled.parameters[i].offset, declared->parameters[i].offset) << compiled.name << " #" << i;
      EXPECT_EQ(compiled.parameters[i].bytes, declared->parameters[i].bytes) << compiled.name << " #" << i;
    }
  }
  for (const VariableInfo& compiled : from_cubin.variables) {
    const VariableInfo* declared = variable(from_ptx, compiled.name);
    ASSERT_NE(nullptr, declared) << compiled.name;
    EXPECT_EQ(compiled.bytes, declared->bytes) << compiled.name;
    if (!compiled.initial_value.empty()) {
      EXPECT_EQ(compiled.initial_value, declared->initial_value) << compiled.name;
    }
  }
  ASSERT_NE(nullptr, variable(from_ptx, "managed_value"));
  EXPECT_TRUE(variable(from_ptx, "managed_value")->managed);
  ASSERT_NE(nullptr, variable(from_ptx, "zeroed_buffer"));
  EXPECT_EQ(1024u, variable(from_ptx, "zeroed_buffer")->bytes);
}

TEST(Fatbin, DefaultOutputHoldsSm75CubinAndZstdPtx) {
  auto entries = parse_fatbin_file("test_kernels.default.fatbin");
  const FatbinEntry* elf = entry(entries, FatbinEntryKind::kElf, 75);
  const FatbinEntry* ptx = entry(entries, FatbinEntryKind::kPtx, 75);
  ASSERT_NE(nullptr, elf);
  ASSERT_NE(nullptr, ptx);
  EXPECT_EQ(0, std::memcmp(elf->payload.data(),
                           "\x7f"
                           "ELF",
                           4));
  std::string text(reinterpret_cast<const char*>(ptx->payload.data()));
  EXPECT_NE(std::string::npos, text.find(".entry add_one")) << "zstd-compressed PTX decompressed";
}

TEST(Fatbin, CompressionModesDecompressToTheSameContent) {
  // -compress-mode=none and =speed (LZ4) of the same sm_90 build carry the same PTX.
  auto plain = parse_fatbin_file("test_kernels.none.fatbin");
  auto lz4 = parse_fatbin_file("test_kernels.speed.fatbin");
  const FatbinEntry* plain_ptx = entry(plain, FatbinEntryKind::kPtx, 90);
  const FatbinEntry* lz4_ptx = entry(lz4, FatbinEntryKind::kPtx, 90);
  ASSERT_NE(nullptr, plain_ptx);
  ASSERT_NE(nullptr, lz4_ptx);
  EXPECT_STREQ(reinterpret_cast<const char*>(plain_ptx->payload.data()),
               reinterpret_cast<const char*>(lz4_ptx->payload.data()));

  // -compress-mode=size: every entry zstd-compressed, two architectures.
  auto zstd = parse_fatbin_file("test_kernels.size.fatbin");
  for (int arch : {80, 90}) {
    const FatbinEntry* elf = entry(zstd, FatbinEntryKind::kElf, arch);
    ASSERT_NE(nullptr, elf) << arch;
    ModuleImage image;
    std::string error;
    ASSERT_TRUE(parse_cubin(elf->payload.data(), elf->payload.size(), image, error)) << error;
    EXPECT_EQ(arch, image.sm_arch);
    EXPECT_EQ(5u, image.kernels.size());
  }
  EXPECT_NE(nullptr, entry(zstd, FatbinEntryKind::kPtx, 90));
}

TEST(Fatbin, ObjectFileSectionIsAFatbin) {
  if (read_image("test_kernels.object.fatbin").empty()) GTEST_SKIP() << "objcopy was not found at build time";
  auto entries = parse_fatbin_file("test_kernels.object.fatbin");
  EXPECT_NE(nullptr, entry(entries, FatbinEntryKind::kElf, 90));
}

TEST(ImageLoader, PicksTheEntryTheDeviceWouldRun) {
  auto bytes = read_image("test_kernels.size.fatbin");
  ModuleImage image;
  ASSERT_EQ(CUDA_SUCCESS, load_module_image_bytes(bytes.data(), bytes.size(), {86, true}, image));
  EXPECT_EQ(80, image.sm_arch) << "sm_80 code runs on 8.6";
  EXPECT_FALSE(image.from_ptx);
  ASSERT_EQ(CUDA_SUCCESS, load_module_image_bytes(bytes.data(), bytes.size(), {90, true}, image));
  EXPECT_EQ(90, image.sm_arch);
  ASSERT_EQ(CUDA_SUCCESS, load_module_image_bytes(bytes.data(), bytes.size(), {100, true}, image));
  EXPECT_TRUE(image.from_ptx) << "10.0 has no cubin here: compute_90 PTX is JIT-compiled";
  EXPECT_EQ(CUDA_ERROR_NO_BINARY_FOR_GPU, load_module_image_bytes(bytes.data(), bytes.size(), {100, false}, image))
      << "unless PTX JIT is disabled";
  EXPECT_EQ(CUDA_ERROR_NO_BINARY_FOR_GPU, load_module_image_bytes(bytes.data(), bytes.size(), {75, true}, image));
  auto ptx = read_image("test_kernels.sm90.ptx");
  EXPECT_EQ(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, load_module_image_bytes(ptx.data(), ptx.size(), {90, false}, image));
}

// Flips, overwrites and truncates real images; every parse must end in a
// clean result. AddressSanitizer turns any out-of-bounds read into a failure.
TEST(Corruption, MutatedImagesNeverReadOutOfBounds) {
  std::mt19937 random(20251121);
  const char* names[] = {"test_kernels.sm90.cubin", "test_kernels.default.fatbin", "test_kernels.size.fatbin",
                         "test_kernels.speed.fatbin", "test_kernels.sm90.ptx"};
  int accepted = 0, refused = 0;
  for (const char* name : names) {
    const auto original = read_image(name);
    ASSERT_FALSE(original.empty()) << name;
    for (int round = 0; round < 300; ++round) {
      auto bytes = original;
      const int mutations = 1 + int(random() % 8);
      for (int m = 0; m < mutations; ++m) {
        size_t at = random() % bytes.size();
        switch (random() % 3) {
          case 0:
            bytes[at] ^= uint8_t(1u << (random() % 8));
            break;
          case 1:
            bytes[at] = uint8_t(random());
            break;
          default:
            bytes.resize(std::max<size_t>(16, at));
            break;
        }
      }
      ModuleImage image;
      CUresult result = load_module_image_bytes(bytes.data(), bytes.size(), {90, true}, image);
      (result == CUDA_SUCCESS ? accepted : refused)++;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted + refused, 1000);
}

}  // namespace
