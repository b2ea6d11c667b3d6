// Real nvcc output (built from test_kernels.cu at build time) loads through
// cuModuleLoadData / cuLibraryLoadData, kernels are found by their ELF symbol
// names and launch; images without code for the device get the documented error.
#include <simgpu.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "driver_test_support.h"

namespace {

std::vector<char> read_image(const std::string& name) {
  const char* dir = std::getenv("SIMGPU_TEST_IMAGES_DIR");
  std::ifstream file(std::string(dir ? dir : ".") + "/" + name, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (!bytes.empty() && name.size() > 4 && name.substr(name.size() - 4) == ".ptx") bytes.push_back('\0');
  return bytes;
}

class ModuleTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    ASSERT_FALSE(read_image("test_kernels.sm90.cubin").empty()) << "nvcc output missing: SIMGPU_TEST_IMAGES_DIR";
  }

  // Launches add_one(data, 16) and scale<float>(data, 2, 16) from `module`.
  void launch_both(CUfunction add_one, CUfunction scale_float) {
    CUdeviceptr data = 0;
    ASSERT_CU_OK(cuMemAlloc(&data, 16 * sizeof(float)));
    int count = 16;
    float factor = 2.0f;
    void* add_args[] = {&data, &count};
    void* scale_args[] = {&data, &factor, &count};
    ASSERT_CU_OK(cuLaunchKernel(add_one, 1, 1, 1, 16, 1, 1, 0, nullptr, add_args, nullptr));
    ASSERT_CU_OK(cuLaunchKernel(scale_float, 1, 1, 1, 16, 1, 1, 0, nullptr, scale_args, nullptr));
    ASSERT_CU_OK(cuCtxSynchronize());
    ASSERT_CU_OK(cuMemFree(data));
  }
};

constexpr const char* kScaleFloat = "_Z5scaleIfEvPT_S0_i";
constexpr const char* kScaleDouble = "_Z5scaleIdEvPT_S0_i";

TEST_F(ModuleTest, CubinLoadsAndBothKernelKindsLaunchByName) {
  auto image = read_image("test_kernels.sm90.cubin");
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuModuleLoadData(&module, image.data()));
  CUfunction add_one = nullptr, scale_float = nullptr;
  ASSERT_CU_OK(cuModuleGetFunction(&add_one, module, "add_one"));
  ASSERT_CU_OK(cuModuleGetFunction(&scale_float, module, kScaleFloat));
  const char* name = nullptr;
  ASSERT_CU_OK(cuFuncGetName(&name, scale_float));
  EXPECT_STREQ(kScaleFloat, name);
  unsigned count = 0;
  ASSERT_CU_OK(cuModuleGetFunctionCount(&count, module));
  EXPECT_EQ(5u, count) << "add_one, scale<float>, scale<double>, bounded, empty_kernel";
  CUfunction missing = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&missing, module, "scale")) << "only mangled names exist";
  launch_both(add_one, scale_float);
  ASSERT_CU_OK(cuModuleUnload(module));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(module));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(add_one, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr))
      << "functions of an unloaded module are gone";
}

TEST_F(ModuleTest, KernelAttributesAndParametersComeFromTheCubin) {
  auto image = read_image("test_kernels.sm90.cubin");
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuModuleLoadData(&module, image.data()));
  CUfunction bounded = nullptr, scale_double = nullptr, add_one = nullptr;
  ASSERT_CU_OK(cuModuleGetFunction(&bounded, module, "bounded"));
  ASSERT_CU_OK(cuModuleGetFunction(&scale_double, module, kScaleDouble));
  ASSERT_CU_OK(cuModuleGetFunction(&add_one, module, "add_one"));
  int value = 0;
  ASSERT_CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, bounded));
  EXPECT_EQ(128, value) << "__launch_bounds__(128)";
  ASSERT_CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, add_one));
  EXPECT_EQ(1024, value);
  ASSERT_CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, bounded));
  EXPECT_GE(value, 512) << "__shared__ float tile[128]";
  ASSERT_CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, add_one));
  EXPECT_GT(value, 0);
  ASSERT_CU_OK(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_BINARY_VERSION, add_one));
  EXPECT_EQ(90, value);

  size_t offset = 0, size = 0;
  const size_t expected[][2] = {{0, 8}, {8, 8}, {16, 4}};  // double*, double, int
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_CU_OK(cuFuncGetParamInfo(scale_double, i, &offset, &size));
    EXPECT_EQ(expected[i][0], offset) << "parameter " << i;
    EXPECT_EQ(expected[i][1], size) << "parameter " << i;
  }
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(scale_double, 3, &offset, &size));

  float* unused = nullptr;
  void* args[] = {&unused};
  EXPECT_CU(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, cuLaunchKernel(bounded, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(add_one, 1, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(add_one, 0, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr))
      << "a kernel with parameters needs kernelParams or extra";
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 64 * 1024, nullptr, args, nullptr))
      << "more dynamic shared memory than allowed without cuFuncSetAttribute";
  ASSERT_CU_OK(cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
  int count = 0;
  void* full_args[] = {&unused, &count};
  EXPECT_CU_OK(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 64 * 1024, nullptr, full_args, nullptr));
  ASSERT_CU_OK(cuModuleUnload(module));
}

TEST_F(ModuleTest, ModuleVariablesHaveTheirInitialValues) {
  auto image = read_image("test_kernels.sm90.cubin");
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuModuleLoadData(&module, image.data()));
  CUdeviceptr counter = 0, buffer = 0;
  size_t bytes = 0;
  ASSERT_CU_OK(cuModuleGetGlobal(&counter, &bytes, module, "initialized_counter"));
  EXPECT_EQ(sizeof(int), bytes);
  int value = 0;
  ASSERT_CU_OK(cuMemcpyDtoH(&value, counter, sizeof(value)));
  EXPECT_EQ(42, value);
  ASSERT_CU_OK(cuModuleGetGlobal(&buffer, &bytes, module, "zeroed_buffer"));
  EXPECT_EQ(256 * sizeof(float), bytes);
  std::vector<float> floats(256, 1.0f);
  ASSERT_CU_OK(cuMemcpyDtoH(floats.data(), buffer, bytes));
  EXPECT_EQ(std::vector<float>(256, 0.0f), floats);
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&buffer, &bytes, module, "no_such_variable"));
  ASSERT_CU_OK(cuModuleUnload(module));
}

// Every fatbin flavour nvcc 13 writes: uncompressed, zstd (the default for PTX,
// and for everything with -compress-mode=size), LZ4 (-compress-mode=speed),
// several architectures, and the .nv_fatbin section of an object file.
class FatbinFlavourTest : public ModuleTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(FatbinFlavourTest, LoadsAsLibraryAndKernelsLaunch) {
  auto image = read_image(GetParam());
  if (image.empty() && std::string(GetParam()) == "test_kernels.object.fatbin") {
    GTEST_SKIP() << "objcopy was not found at build time";
  }
  ASSERT_FALSE(image.empty());
  CUlibrary library = nullptr;
  ASSERT_CU_OK(cuLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUkernel add_one = nullptr, scale_float = nullptr;
  ASSERT_CU_OK(cuLibraryGetKernel(&add_one, library, "add_one"));
  ASSERT_CU_OK(cuLibraryGetKernel(&scale_float, library, kScaleFloat));
  CUfunction add_one_function = nullptr;
  ASSERT_CU_OK(cuKernelGetFunction(&add_one_function, add_one));
  // A CUkernel may be passed where a CUfunction is expected.
  launch_both(add_one_function, reinterpret_cast<CUfunction>(scale_float));
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuLibraryGetModule(&module, library));
  CUfunction via_module = nullptr;
  EXPECT_CU_OK(cuModuleGetFunction(&via_module, module, "bounded"));
  CUdeviceptr managed = 0;
  size_t bytes = 0;
  ASSERT_CU_OK(cuLibraryGetManaged(&managed, &bytes, library, "managed_value"));
  EXPECT_EQ(sizeof(int), bytes);
  EXPECT_EQ(7, *reinterpret_cast<int*>(managed)) << "managed memory is host-accessible";
  bool is_managed = false;
  ASSERT_CU_OK(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, managed));
  EXPECT_TRUE(is_managed);
  EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuLibraryGetManaged(&managed, &bytes, library, "initialized_counter"));
  ASSERT_CU_OK(cuLibraryUnload(library));

  CUmodule fatbin_module = nullptr;
  ASSERT_CU_OK(cuModuleLoadFatBinary(&fatbin_module, image.data()));
  CUfunction function = nullptr;
  EXPECT_CU_OK(cuModuleGetFunction(&function, fatbin_module, kScaleDouble));
  ASSERT_CU_OK(cuModuleUnload(fatbin_module));
}

INSTANTIATE_TEST_SUITE_P(NvccOutputs, FatbinFlavourTest,
                         ::testing::Values("test_kernels.default.fatbin", "test_kernels.size.fatbin",
                                           "test_kernels.speed.fatbin", "test_kernels.none.fatbin",
                                           "test_kernels.object.fatbin", "test_kernels.ptx90.fatbin"));

TEST_F(ModuleTest, RuntimeRegistrationWrapperIsAccepted) {
  auto image = read_image("test_kernels.default.fatbin");
  struct {
    int magic;
    int version;
    const void* data;
    void* unused;
  } wrapper{0x466243b1, 1, image.data(), nullptr};
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuModuleLoadData(&module, &wrapper));
  CUfunction function = nullptr;
  EXPECT_CU_OK(cuModuleGetFunction(&function, module, "add_one"));
  ASSERT_CU_OK(cuModuleUnload(module));
}

TEST_F(ModuleTest, PtxTextIsJitCompiledToItsEntries) {
  auto ptx = read_image("test_kernels.sm90.ptx");
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuModuleLoadData(&module, ptx.data()));
  CUfunction scale_double = nullptr;
  ASSERT_CU_OK(cuModuleGetFunction(&scale_double, module, kScaleDouble));
  size_t offset = 0, size = 0;
  ASSERT_CU_OK(cuFuncGetParamInfo(scale_double, 1, &offset, &size));
  EXPECT_EQ(8u, offset);
  EXPECT_EQ(8u, size);
  CUdeviceptr counter = 0;
  size_t bytes = 0;
  EXPECT_CU_OK(cuModuleGetGlobal(&counter, &bytes, module, "initialized_counter"));
  EXPECT_EQ(4u, bytes);
  ASSERT_CU_OK(cuModuleUnload(module));
}

TEST_F(ModuleTest, ImagesWithoutCodeForTheDeviceAreRefused) {
  CUmodule module = nullptr;
  auto newer_ptx_only = read_image("test_kernels.ptx100.fatbin");
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&module, newer_ptx_only.data()))
      << "PTX for compute_100 cannot be compiled for a 9.0 device";
  auto other_major = read_image("test_kernels.sm80.cubin");
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&module, other_major.data()))
      << "an sm_80 cubin does not run on a 9.0 device";
  CUlibrary library = nullptr;
  EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU,
            cuLibraryLoadData(&library, newer_ptx_only.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
}

TEST_F(ModuleTest, LaunchTakesTheCostSetForTheKernel) {
  auto image = read_image("test_kernels.sm90.cubin");
  CUmodule module = nullptr;
  ASSERT_CU_OK(cuModuleLoadData(&module, image.data()));
  CUfunction scale_float = nullptr;
  ASSERT_CU_OK(cuModuleGetFunction(&scale_float, module, kScaleFloat));
  constexpr unsigned long long kFixedNs = 20'000'000, kPerWaveNs = 5'000'000;
  ASSERT_EQ(0, simgpuSetKernelCost(kScaleFloat, kFixedNs, kPerWaveNs));
  int sm_count = 0;
  ASSERT_CU_OK(cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
  CUevent start = nullptr, end = nullptr;
  ASSERT_CU_OK(cuEventCreate(&start, 0));
  ASSERT_CU_OK(cuEventCreate(&end, 0));
  CUdeviceptr data = 0;
  float factor = 1;
  int count = 0;
  void* args[] = {&data, &factor, &count};
  // Three waves: 2 * SM count + 1 blocks.
  ASSERT_CU_OK(cuEventRecord(start, nullptr));
  ASSERT_CU_OK(cuLaunchKernel(scale_float, unsigned(2 * sm_count + 1), 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  ASSERT_CU_OK(cuEventRecord(end, nullptr));
  ASSERT_CU_OK(cuEventSynchronize(end));
  const float modelled_ms = float(kFixedNs + 3 * kPerWaveNs) / 1e6f;
  const float measured_ms = elapsed_ms(start, end);
  EXPECT_GE(measured_ms, modelled_ms);
  EXPECT_LT(measured_ms, modelled_ms + 30.0f);
  ASSERT_CU_OK(cuEventDestroy(start));
  ASSERT_CU_OK(cuEventDestroy(end));
  ASSERT_CU_OK(cuModuleUnload(module));
}

}  // namespace
