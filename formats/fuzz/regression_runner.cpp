// Runs the fuzzer entry point without libFuzzer, so that every build (and
// CI) exercises it: over the built-in seeds, over deterministic mutations of
// them (bit flips, cuts, spliced chunks), and over every file in the
// directories given on the command line (inputs the fuzzer once found).
//   fuzz_regression_runner [DIR_OR_FILE...]
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "formats/fuzz/seed_traces.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

size_t run(const std::vector<uint8_t>& input) {
  LLVMFuzzerTestOneInput(input.data(), input.size());
  return 1;
}

size_t run_mutations(const std::vector<uint8_t>& seed, std::mt19937& random) {
  size_t runs = 0;
  if (seed.empty()) return runs;
  std::uniform_int_distribution<size_t> position(0, seed.size() - 1);
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> input = seed;
    switch (i % 4) {
      case 0:  // a few random byte flips
        for (int k = 0; k < 1 + i % 3; ++k) input[position(random)] ^= static_cast<uint8_t>(1 + random() % 255);
        break;
      case 1:  // a cut
        input.resize(position(random));
        break;
      case 2: {  // a copied range pasted elsewhere (duplicated chunks, spliced headers)
        const size_t from = position(random), to = position(random);
        const size_t length = std::min<size_t>(1 + random() % 200, seed.size() - from);
        input.insert(input.begin() + static_cast<long>(to), seed.begin() + static_cast<long>(from),
                     seed.begin() + static_cast<long>(from + length));
        break;
      }
      case 3:  // a run of bytes overwritten with one value
        for (size_t at = position(random), n = 0; at < input.size() && n < 16; ++at, ++n)
          input[at] = static_cast<uint8_t>(i);
        break;
    }
    runs += run(input);
  }
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  size_t runs = 0;
  std::mt19937 random(12345);  // fixed: the same inputs on every run
  for (const auto& seed : proflaunch::format::seed_traces()) {
    runs += run(seed.bytes);
    runs += run_mutations(seed.bytes, random);
  }
  for (int i = 1; i < argc; ++i) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(argv[i])) {
      for (const auto& entry : std::filesystem::directory_iterator(argv[i]))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.emplace_back(argv[i]);
    }
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", path.c_str());
        return 1;
      }
      std::vector<uint8_t> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      runs += run(input);
    }
  }
  std::printf("%zu inputs ran without a crash or a broken invariant\n", runs);
  return 0;
}
