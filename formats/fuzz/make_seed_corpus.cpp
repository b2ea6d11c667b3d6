// Writes the fuzzer's seed corpus (seed_traces()) into a directory:
//   make_seed_corpus DIR
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "formats/fuzz/seed_traces.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    std::fprintf(stderr, "%s: %s\n", argv[1], error.message().c_str());
    return 1;
  }
  for (const auto& seed : proflaunch::format::seed_traces()) {
    std::ofstream out(dir / (seed.name + ".trace"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(seed.bytes.data()),
              static_cast<std::streamsize>(seed.bytes.size()));
    if (!out) {
      std::fprintf(stderr, "%s: write failed\n", (dir / seed.name).c_str());
      return 1;
    }
  }
  return 0;
}
