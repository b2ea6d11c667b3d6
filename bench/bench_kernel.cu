// The kernel of the launch benchmark: empty, so the simulated device's cost
// model alone decides its duration (set to nothing by the benchmark runner).
extern "C" __global__ void bench_empty_kernel() {}
