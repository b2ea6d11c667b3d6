/* The (name, version, variant) -> entry point table generated from
   cudaTypedefs.h (gen/gen_driver_tables.py). Shared by the generated C file
   and the C++ cuGetProcAddress implementation. */
#ifndef SIMGPU_PROC_TABLE_H
#define SIMGPU_PROC_TABLE_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum SimgpuProcVariant {
  SIMGPU_VARIANT_LEGACY = 0, /* no suffix */
  SIMGPU_VARIANT_PTSZ = 1,   /* _ptsz: NULL stream means the per-thread stream */
  SIMGPU_VARIANT_PTDS = 2,   /* _ptds: implicit stream is the per-thread stream */
};

typedef struct SimgpuProcEntry {
  const char* name;   /* base name as passed to cuGetProcAddress */
  int version;        /* CUDA version that introduced this ABI variant */
  int variant;        /* enum SimgpuProcVariant */
  const char* symbol; /* exported symbol name */
  void* address;      /* the simulator's own function */
} SimgpuProcEntry;

/* Sorted by (name, version, variant). */
extern const SimgpuProcEntry simgpu_proc_entries[];
extern const size_t simgpu_proc_entry_count;
/* Address every unimplemented entry point aliases (returns CUDA_ERROR_NOT_SUPPORTED). */
extern void* const simgpu_unsupported_entry_address;

#ifdef __cplusplus
}
#endif
#endif
