// usage: launch_cost [ROUNDS=200]  (tests/gpu/validate.sh prints it untraced and traced)
// Launch cost on real hardware: bursts of 256 empty kernels on one stream
// (below the launch queue's depth, so submission never waits for the GPU);
// only the submitting loop is timed; the stream is drained between bursts.
#include <chrono>
#include <cstdio>
#include <cstdlib>
__global__ void empty_kernel() {}
int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 200, burst = 256;
  cudaStream_t s; cudaStreamCreate(&s);
  for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32, 0, s>>>();
  cudaStreamSynchronize(s);
  double submit_ns = 0;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < burst; ++i) empty_kernel<<<1, 32, 0, s>>>();
    auto t1 = std::chrono::steady_clock::now();
    submit_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    cudaStreamSynchronize(s);
  }
  printf("launches: %d in bursts of %d, %.1f ns per launch submitted, %s\n", rounds * burst, burst,
         submit_ns / (rounds * burst), cudaGetErrorString(cudaGetLastError()));
  return 0;
}
