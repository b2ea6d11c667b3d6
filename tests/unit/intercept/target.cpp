// A library the test loads RTLD_LOCAL, like libcuda under Triton.
extern "C" int target_fn(int x) { return x + 1; }
extern "C" int target_other(int x) { return x + 2; }
