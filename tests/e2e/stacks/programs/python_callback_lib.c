// libpython_callback.so: calls a Python function (a ctypes callback) from C,
// so that a Python stack has two runs of frames - each entered from C - with
// this native frame between them (tests/e2e/stacks/python_stacks_test.cpp).
#define CALLBACK_API __attribute__((visibility("default")))

CALLBACK_API int stacks_call_back(int (*callback)(int), int value) {
  const int result = callback(value);  // not a tail call: this frame stays (-fno-optimize-sibling-calls)
  return result;
}
