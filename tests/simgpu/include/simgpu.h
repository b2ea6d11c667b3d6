/* simgpu.h: extensions of the simulated CUDA driver (libcuda.so.1 in tests/simgpu).
 *
 * The simulated driver gives every kernel launch a modelled, deterministic duration:
 *
 *     duration_ns = fixed_ns + per_wave_ns * waves,   waves = ceil(total blocks / SM count)
 *
 * where total blocks = gridDim.x * gridDim.y * gridDim.z and the SM count is
 * SIMGPU_SM_COUNT (default 132). A program sets the cost of its kernels with
 * simgpuSetKernelCost; a program that cannot be modified gets them from the
 * environment instead:
 *
 *     SIMGPU_KERNEL_COSTS="add_one=10us,_Z5scaleIfEvPT_S0_i=200us:5us,*=2us"
 *
 * (name=fixed[:per_wave], durations with ns/us/ms/s suffixes, plain numbers are ns;
 * "*" is the default for kernels without an own entry: 5us fixed + 1us per wave
 * unless set). Names are the kernels' ELF symbol names, i.e. mangled C++ names.
 * Calls to simgpuSetKernelCost override the environment and apply to launches
 * made after the call. These functions exist only in the simulator: resolve them
 * with dlsym so the same program also runs on a real driver.
 */
#ifndef SIMGPU_H
#define SIMGPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the cost of `kernel_name` ("*" for the default). Returns 0, or -1 if the
   name is NULL or empty. May be called before cuInit and from any thread. */
int simgpuSetKernelCost(const char* kernel_name, unsigned long long fixed_ns,
                        unsigned long long per_wave_ns);

typedef int (*PFN_simgpuSetKernelCost)(const char* kernel_name, unsigned long long fixed_ns,
                                       unsigned long long per_wave_ns);

#ifdef __cplusplus
}
#endif

#endif /* SIMGPU_H */
