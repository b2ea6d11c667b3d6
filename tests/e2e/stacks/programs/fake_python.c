// Looks like a CPython interpreter to the shim - its C API symbols, exported
// from the executable as a statically linked python3 does - but its type
// objects say its code (or frame) objects have another size than the
// release layout of that version: the shim must not read its frames, say so
// once, and leave the program alone (tests/e2e/stacks/python_refusal_test).
//   fake_python_new: Py_Version 3.13, code objects of 999 bytes.
//   fake_python_old: no Py_Version; Py_GetVersion() says 3.10, frame objects
//                    of 1 byte. It counts its calls (the shim asks once).
// usage: fake_python_* LIBRARY_TO_DLOPEN   (a library loaded mid-run)
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

#define EXPORTED __attribute__((visibility("default"), used))

// The head of a PyTypeObject: tp_basicsize at offset 32.
struct FakeType {
  char head[32];
  long basic_size;
};

#ifdef FAKE_PY_VERSION
EXPORTED const unsigned long Py_Version = 0x030D00F0;  // 3.13.0 final
EXPORTED struct FakeType PyCode_Type = {{0}, 999};
EXPORTED struct FakeType PyFrame_Type = {{0}, 136};
#else
static int version_calls;
EXPORTED const char* Py_GetVersion(void) {
  ++version_calls;
  return "3.10.4 (fake, Jan  1 2024, 00:00:00) [GCC]";
}
EXPORTED struct FakeType PyCode_Type = {{0}, 176};
EXPORTED struct FakeType PyFrame_Type = {{0}, 1};
#endif
EXPORTED struct FakeType PyUnicode_Type = {{0}, 80};
EXPORTED struct FakeType PyBytes_Type = {{0}, 33};
EXPORTED void* PyGILState_GetThisThreadState(void) { return NULL; }
EXPORTED int Py_IsInitialized(void) { return 1; }

static int zero(void* device, size_t bytes) { return (int)cudaMemset(device, 0, bytes); }
static int zero_again(void* device, size_t bytes) { return (int)cudaMemset(device, 0, bytes); }

int main(int argc, char** argv) {
  void* device = NULL;
  if (argc < 2 || cudaMalloc(&device, 64) != cudaSuccess || zero(device, 64) != 0) return 1;
  // A library loaded now makes the shim look for the interpreter again.
  if (dlopen(argv[1], RTLD_NOW) == NULL) return 2;
  if (zero_again(device, 64) != 0) return 3;
  cudaFree(device);
#ifdef FAKE_PY_VERSION
  printf("fake_python: ok\n");
#else
  printf("fake_python: ok, Py_GetVersion called %d time(s)\n", version_calls);
#endif
  return 0;
}
