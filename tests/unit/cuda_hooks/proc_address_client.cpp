// Run under the shim (LD_PRELOAD=libproflaunch.so) on the simulated driver:
// dlopens libcuda.so.1 the way cuBLAS does, asks cuGetProcAddress_v2 for
// ABI variants and checks what it hands out against the symbol tables of
// the driver and the shim (read from their files, so no lookup goes through
// the shim's own dlsym):
//   cuLaunchKernel                   -> the shim's cuLaunchKernel
//   cuLaunchKernel, per-thread flag  -> the shim's cuLaunchKernel_ptsz
//   cuMemcpyHtoD at 3020             -> the shim's cuMemcpyHtoD_v2
//   cuMemcpyHtoD at 2000             -> the shim's cuMemcpyHtoD (the legacy 32-bit ABI, wrapped too)
// then calls the wrappers (a copy and two launches of a kernel from the
// cubin in argv[1]), which must work. The test reads what was recorded.
//
// usage: proc_address_client KERNEL.cubin     prints "proc_address_client: ok"
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  ++failures;
}

// Where `symbol` of the loaded object whose path contains `object` is, from
// the object's .dynsym in its file plus its load address.
void* exported_address(const char* object, const char* symbol) {
  struct Found {
    const char* object;
    std::string path;
    ElfW(Addr) base = 0;
  } found;
  found.object = object;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* f = static_cast<Found*>(data);
        if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, f->object) == nullptr) return 0;
        f->path = info->dlpi_name;
        f->base = info->dlpi_addr;
        return 1;
      },
      &found);
  if (found.path.empty()) return nullptr;
  // Each file read once, in one piece: a sanitized shim with its debug
  // information is tens of MB, and reading it a character at a time per
  // symbol took 18 s under ASan (past the test's limit on a loaded machine).
  static std::map<std::string, std::string> files;
  auto [cached, added] = files.try_emplace(found.path);
  if (added) {
    std::ifstream in(found.path, std::ios::binary | std::ios::ate);
    cached->second.resize(size_t(std::max<std::streamoff>(0, in.tellg())));
    in.seekg(0);
    in.read(cached->second.data(), std::streamsize(cached->second.size()));
  }
  const std::string& file = cached->second;
  if (file.size() < sizeof(ElfW(Ehdr))) return nullptr;
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(file.data());
  const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(file.data() + header->e_shoff);
  for (int i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const char* names = file.data() + sections[sections[i].sh_link].sh_offset;
    const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(file.data() + sections[i].sh_offset);
    for (size_t s = 0; s < sections[i].sh_size / sizeof(ElfW(Sym)); ++s)
      if (symbols[s].st_shndx != SHN_UNDEF && std::strcmp(names + symbols[s].st_name, symbol) == 0)
        return reinterpret_cast<void*>(found.base + symbols[s].st_value);
  }
  return nullptr;
}

void* driver_export(const char* symbol) { return exported_address("libcuda.so", symbol); }
void* shim_export(const char* symbol) { return exported_address("libproflaunch.so", symbol); }

PFN_cuGetProcAddress_v12000 get_proc_address;

void* lookup(const char* name, int version, cuuint64_t flags = CU_GET_PROC_ADDRESS_DEFAULT) {
  void* function = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = get_proc_address(name, &function, version, flags, &status);
  expect(result == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && function != nullptr,
         std::string("cuGetProcAddress_v2(") + name + ", " + std::to_string(version) + ")");
  return function;
}

#define CHECK_CU(call) expect((call) == CUDA_SUCCESS, #call)

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: proc_address_client KERNEL.cubin\n");
    return 2;
  }
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    std::fprintf(stderr, "cannot load libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  get_proc_address = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  if (get_proc_address == nullptr || shim_export("cuGetProcAddress_v2") == nullptr) {
    std::fprintf(stderr, "no cuGetProcAddress_v2, or the shim is not loaded\n");
    return 1;
  }
  expect(reinterpret_cast<void*>(get_proc_address) == shim_export("cuGetProcAddress_v2"),
         "dlsym(libcuda, cuGetProcAddress_v2) is the shim's");

  auto* launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(lookup("cuLaunchKernel", 12000));
  auto* launch_per_thread = reinterpret_cast<PFN_cuLaunchKernel_v7000_ptsz>(
      lookup("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM));
  auto* copy = reinterpret_cast<PFN_cuMemcpyHtoD_v3020>(lookup("cuMemcpyHtoD", 3020));
  void* legacy_copy = lookup("cuMemcpyHtoD", 2000);

  expect(reinterpret_cast<void*>(launch) == shim_export("cuLaunchKernel"), "cuLaunchKernel is the shim's");
  expect(reinterpret_cast<void*>(launch) != driver_export("cuLaunchKernel"), "cuLaunchKernel is not the driver's");
  expect(reinterpret_cast<void*>(launch_per_thread) == shim_export("cuLaunchKernel_ptsz"),
         "cuLaunchKernel per thread is the shim's cuLaunchKernel_ptsz");
  expect(reinterpret_cast<void*>(launch_per_thread) != driver_export("cuLaunchKernel_ptsz"),
         "cuLaunchKernel per thread is not the driver's");
  expect(reinterpret_cast<void*>(copy) == shim_export("cuMemcpyHtoD_v2"), "cuMemcpyHtoD@3020 is the shim's _v2");
  expect(reinterpret_cast<void*>(copy) != driver_export("cuMemcpyHtoD_v2"), "cuMemcpyHtoD@3020 is not the driver's");
  expect(legacy_copy != nullptr && legacy_copy == shim_export("cuMemcpyHtoD"),
         "cuMemcpyHtoD@2000 is the shim's wrapper of the legacy function");
  expect(legacy_copy != reinterpret_cast<void*>(copy), "the legacy and the _v2 ABI have wrappers of their own");

  // Calling the wrappers works.
  auto* init = reinterpret_cast<PFN_cuInit_v2000>(lookup("cuInit", 2000));
  auto* device_get = reinterpret_cast<PFN_cuDeviceGet_v2000>(lookup("cuDeviceGet", 2000));
  auto* retain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(lookup("cuDevicePrimaryCtxRetain", 7000));
  auto* set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(lookup("cuCtxSetCurrent", 4000));
  auto* alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(lookup("cuMemAlloc", 3020));
  auto* load = reinterpret_cast<PFN_cuModuleLoadData_v2000>(lookup("cuModuleLoadData", 2000));
  auto* get_function = reinterpret_cast<PFN_cuModuleGetFunction_v2000>(lookup("cuModuleGetFunction", 2000));
  auto* synchronize = reinterpret_cast<PFN_cuCtxSynchronize_v2000>(lookup("cuCtxSynchronize", 2000));
  if (failures != 0) return 1;

  std::ifstream in(argv[1], std::ios::binary);
  const std::string cubin((std::istreambuf_iterator<char>(in)), {});
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUdeviceptr buffer = 0;
  CHECK_CU(init(0));
  CHECK_CU(device_get(&device, 0));
  CHECK_CU(retain(&context, device));
  CHECK_CU(set_current(context));
  CHECK_CU(load(&module, cubin.data()));
  CHECK_CU(get_function(&function, module, "e2e_probe_kernel"));
  std::vector<float> host(1024, 1.0f);
  CHECK_CU(alloc(&buffer, host.size() * sizeof(float)));
  CHECK_CU(copy(buffer, host.data(), host.size() * sizeof(float)));
  int count = static_cast<int>(host.size());
  void* args[] = {&buffer, &count};
  CHECK_CU(launch(function, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(launch_per_thread(function, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(synchronize());
  if (failures != 0) return 1;
  std::printf("proc_address_client: ok\n");
  return 0;
}
