// libFuzzer's custom mutator for the commands fuzzer: record-level
// mutations (tools/fuzz/record_list.h) half the time, libFuzzer's byte-level
// ones otherwise. Only in the libFuzzer build (it calls LLVMFuzzerMutate).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "tools/fuzz/record_list.h"

using namespace proflaunch;

// Record-level mutations (half the time), libFuzzer's byte-level ones otherwise.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 random(seed);
  if (random() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<fuzz::RecordChunk> chunks = fuzz::parse_record_list(data, size);
  for (int i = 0, n = 1 + static_cast<int>(random() % 4); i < n; ++i) fuzz::mutate_records(chunks, random);
  const std::vector<uint8_t> mutated = fuzz::serialize_record_list(chunks);
  if (mutated.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::copy(mutated.begin(), mutated.end(), data);
  return mutated.size();
}
