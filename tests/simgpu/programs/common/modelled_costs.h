// Sets how long the simulated GPU takes to run a kernel. The knob belongs to
// the simulated driver (tests/simgpu/include/simgpu.h), not to CUDA, so it
// is looked up at run time: on a real driver it is absent and these calls do
// nothing, and the programs run unchanged on real hardware.
#ifndef SIMGPU_PROGRAMS_MODELLED_COSTS_H
#define SIMGPU_PROGRAMS_MODELLED_COSTS_H

// True when the driver in use is the simulator (it has the cost knob).
bool running_on_simulator();

// By device symbol name (mangled where the symbol is mangled). Returns false
// if not running on the simulator or the driver refused the value.
bool set_modelled_kernel_duration(const char* device_name, long duration_ns);

// By the host stub of a <<<>>> kernel (its name comes from cudaFuncGetName).
bool set_modelled_kernel_duration(const void* host_function, long duration_ns);

#endif
