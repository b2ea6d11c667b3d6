// GPU work launched by a path no interposer sees: the program finds the
// driver's cuLaunchKernel in libcuda.so.1's own dynamic symbol table (read
// from the file the loader mapped, as a loader that avoids dlsym would) and
// launches the fill kernel through that address. Everything else goes
// through the runtime as usual: --hooked fills by <<<>>>, then --hidden
// fills through the hidden pointer, on one stream.
//
// A profiler that takes GPU time from the driver's own activity reports
// (CUPTI) still sees the hidden launches; one that hooks calls does not.
//
// usage: hidden_launch [--hooked N=3] [--hidden M=2]
// stdout: "hidden_launch: hooked=N hidden=M ok"
#include <cuda.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/options.h"

namespace {

using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void**, void**);

struct Library {
  std::string path;
  ElfW(Addr) base = 0;
};

int find_driver(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libcuda.so") == nullptr) return 0;
  auto* library = static_cast<Library*>(data);
  library->path = info->dlpi_name;
  library->base = info->dlpi_addr;
  return 1;
}

// The address of `name` in the loaded driver, from the .dynsym of its file.
void* driver_symbol(const char* name) {
  Library library;
  dl_iterate_phdr(find_driver, &library);
  if (library.path.empty()) return nullptr;
  const int fd = open(library.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* map = fstat(fd, &st) == 0 ? mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return nullptr;
  const auto* bytes = static_cast<const unsigned char*>(map);
  const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(bytes);
  const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(bytes + header->e_shoff);
  void* found = nullptr;
  for (unsigned i = 0; i < header->e_shnum && found == nullptr; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(bytes + sections[i].sh_offset);
    const char* strings = reinterpret_cast<const char*>(bytes + sections[sections[i].sh_link].sh_offset);
    for (size_t s = 0; s < sections[i].sh_size / sizeof(ElfW(Sym)); ++s) {
      if (symbols[s].st_shndx != SHN_UNDEF && std::strcmp(strings + symbols[s].st_name, name) == 0) {
        found = reinterpret_cast<void*>(library.base + symbols[s].st_value);
        break;
      }
    }
  }
  munmap(map, size_t(st.st_size));
  return found;
}

// kFill's parameters as kernels.cu declares them: (int, FillFunctor<float>, Array<float*, 1>).
struct FillFunctor {
  float value;
};
struct FillTarget {
  float* data[1];
};

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--hooked", "--hidden"});
  const int hooked = int(options.integer("--hooked", 3));
  const int hidden = int(options.integer("--hidden", 2));
  if (hooked < 0 || hidden < 0) {
    std::fprintf(stderr, "error: --hooked and --hidden must not be negative\n");
    return 2;
  }
  constexpr int kCount = 4096;
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  float* data = nullptr;
  check_cuda(cudaMalloc(&data, kCount * sizeof(float)), "cudaMalloc");
  for (int i = 0; i < hooked; ++i) check_cuda(simtorch::fill(data, kCount, 1.0f, stream), "fill");

  cudaFunction_t function = nullptr;
  check_cuda(cudaGetFuncBySymbol(&function, simtorch::kernel_host_functions().fill), "cudaGetFuncBySymbol");
  const auto launch = reinterpret_cast<LaunchKernel>(driver_symbol("cuLaunchKernel"));
  if (launch == nullptr) {
    std::fprintf(stderr, "error: cuLaunchKernel not found in libcuda.so.1's symbol table\n");
    return 1;
  }
  int count = kCount;
  FillFunctor functor{2.0f};
  FillTarget target{{data}};
  void* params[] = {&count, &functor, &target};
  for (int i = 0; i < hidden; ++i) {
    const CUresult result = launch(reinterpret_cast<CUfunction>(function), kCount / 128, 1, 1, 128, 1, 1, 0,
                                   reinterpret_cast<CUstream>(stream), params, nullptr);
    if (result != CUDA_SUCCESS) {
      std::fprintf(stderr, "error: hidden cuLaunchKernel failed with CUresult %d\n", int(result));
      return 1;
    }
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check_cuda(cudaFree(data), "cudaFree");
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("hidden_launch: hooked=%d hidden=%d ok\n", hooked, hidden);
  return 0;
}
