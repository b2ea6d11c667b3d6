// One round of ordinary GPU work (allocate, copy in, launch, copy out,
// verify, free) for programs whose point is the process around it: fork,
// exec, crash, kill.
#ifndef SIMGPU_PROGRAMS_SMALL_WORKLOAD_H
#define SIMGPU_PROGRAMS_SMALL_WORKLOAD_H

#include <cuda_runtime_api.h>

// Runs `launches` kernels between an H2D and a D2H copy on `stream` (0 = the
// legacy default stream), synchronizes, checks the round trip. Exits 1 on
// any CUDA error; returns false if the data came back wrong.
bool run_small_workload(int launches, cudaStream_t stream = nullptr);

#endif
