// proftrace's side of call stacks on hand-built traces: how native and
// Python frames are merged (leaf last), which names win (the embedded
// symbol table, else the module files, else module+offset), how convert pairs
// a CallStack with its event across chunks and threads, and the call-sites
// table of `proftrace stats`.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "formats/trace_builder.h"
#include "tests/unit/stacks/synthetic_stacks.h"
#include "tests/unit/tools/tool_fixture.h"
#include "tools/proftrace/stacks/runtime_modules.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::testing {
namespace {

using namespace format;

constexpr uint64_t kSection = 0x5A;
constexpr uint64_t kPythonBase = 0x400000;      // the interpreter (non-PIE)
constexpr uint64_t kTorchBase = 0x7f0000000000;  // a library

tools::TraceModel load_model(const std::string& path, std::vector<tools::InputTrace>& inputs) {
  std::string error;
  EXPECT_TRUE(tools::open_inputs({path}, &inputs, &error)) << error;
  tools::TraceModel model;
  tools::load_definitions(inputs, model);
  return model;
}

// A Python program whose model calls into a library that launches: the
// native stack has two interpreter frames (a C call from Python back into
// Python in between), the Python stack two entry frames.
void python_program(TraceBuilder& trace) {
  trace.process(kSection, {.pid = 10, .argv = {"python3", "train.py"}});
  SyntheticStacks s(trace, kSection);
  s.module("/usr/bin/python3", kPythonBase, kPythonBase + 0x100000);
  s.module("/opt/torch/libtorch.so", kTorchBase, kTorchBase + 0x100000);
  // Root first: main, eval, PyObject_Call, eval, torch op, launch helper (inlined).
  const std::vector<uint64_t> innermost_first = {kTorchBase + 0x200, kTorchBase + 0x100, kPythonBase + 0x40,
                                                 kPythonBase + 0x30, kPythonBase + 0x20, kPythonBase + 0x10};
  s.native(1, innermost_first);
  s.symbol(kPythonBase + 0x10, "main");
  s.symbol(kPythonBase + 0x20, "_PyEval_EvalFrameDefault");
  s.symbol(kPythonBase + 0x30, "PyObject_Call");
  s.symbol(kPythonBase + 0x40, "_PyEval_EvalFrameDefault");
  s.symbol(kTorchBase + 0x100, "at::add", "/src/BinaryOps.cpp", 120);
  s.symbol(kTorchBase + 0x200, "launch_add", "/src/Loops.cuh", 88, 0);
  s.symbol(kTorchBase + 0x200, "add_kernel_impl", "/src/Add.cu", 31, 1);
  s.python(1, {{"model.py", "Layer.forward", 7, true}, {"train.py", "step", 42, false},
               {"train.py", "<module>", 50, true}});
  // The same Python stack with a native stack cut short of the interpreter.
  s.native(2, {kTorchBase + 0x200, kTorchBase + 0x100}, kStackTruncated);
}

TEST(StackFormatter, PythonFramesReplaceTheInterpreterFramesTheyRanIn) {
  TraceBuilder trace;
  python_program(trace);
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "python.trace"), inputs);
  const tools::SectionModel& section = *model.find(kSection);
  tools::StackFormatter formatter;
  EXPECT_EQ(formatter.frames(section, 1, 1, "cudaLaunchKernel"),
            (std::vector<std::string>{"train.py:50 <module>", "train.py:42 step", "model.py:7 Layer.forward",
                                      "at::add (BinaryOps.cpp:120)", "add_kernel_impl (Add.cu:31)",
                                      "launch_add (Loops.cuh:88) [inlined]", "cudaLaunchKernel"}));
  // Cut short of the interpreter: the Python frames go first.
  EXPECT_EQ(formatter.frames(section, 2, 1, "cudaLaunchKernel"),
            (std::vector<std::string>{"train.py:50 <module>", "train.py:42 step", "model.py:7 Layer.forward",
                                      "...", "at::add (BinaryOps.cpp:120)", "add_kernel_impl (Add.cu:31)",
                                      "launch_add (Loops.cuh:88) [inlined]", "cudaLaunchKernel"}));
  EXPECT_EQ(formatter.call_site(section, 1, 1), "model.py:7 Layer.forward");
  EXPECT_TRUE(formatter.frames(section, 99, 99, "x").empty()) << "unknown ids: no frames";
}

// An interpreter built with debug info (pyenv's) also names the inline
// wrapper _PyEval_EvalFrame, in the frame that calls the interpreter loop:
// it runs no Python code. A C callback between two runs of Python frames
// stays between them.
TEST(StackFormatter, AnInlinedEvalFrameWrapperIsNotAnInterpreterFrame) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 10, .argv = {"python3", "train.py"}});
  SyntheticStacks s(trace, kSection);
  s.module("/opt/python/lib/libpython3.12.so", kPythonBase, kPythonBase + 0x100000);
  s.module("/opt/torch/libtorch.so", kTorchBase, kTorchBase + 0x100000);
  // Root first: main, eval, the hook that calls back, PyObject_Call (with the
  // inlined wrapper), eval, torch op.
  s.native(1, {kTorchBase + 0x100, kPythonBase + 0x40, kPythonBase + 0x30, kTorchBase + 0x300, kPythonBase + 0x20,
               kPythonBase + 0x10});
  s.symbol(kPythonBase + 0x10, "main");
  s.symbol(kPythonBase + 0x20, "_PyEval_EvalFrameDefault", "/src/ceval.c", 4000);
  s.symbol(kTorchBase + 0x300, "run_hook", "/src/hooks.cpp", 12);
  s.symbol(kPythonBase + 0x30, "_PyEval_EvalFrame", "/src/pycore_ceval.h", 89, 0);
  s.symbol(kPythonBase + 0x30, "_PyObject_Call", "/src/call.c", 367, 1);
  s.symbol(kPythonBase + 0x40, "_PyEval_EvalFrameDefault", "/src/ceval.c", 4100);
  s.symbol(kTorchBase + 0x100, "at::add", "/src/BinaryOps.cpp", 120);
  s.python(1, {{"model.py", "hook", 7, true}, {"train.py", "<module>", 50, true}});
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "python_debug_info.trace"), inputs);
  tools::StackFormatter formatter;
  EXPECT_EQ(formatter.frames(*model.find(kSection), 1, 1, "cudaLaunchKernel"),
            (std::vector<std::string>{"train.py:50 <module>", "run_hook (hooks.cpp:12)", "model.py:7 hook",
                                      "at::add (BinaryOps.cpp:120)", "cudaLaunchKernel"}));
}

// A kernel launched with <<<>>> goes through nvcc's generated stub: the call
// site is the function that launched, not the stub.
TEST(StackFormatter, TheCallSiteOfATripleChevronLaunchIsItsCallerNotTheStub) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 11, .argv = {"./app"}});
  SyntheticStacks s(trace, kSection);
  s.module("/work/app", kPythonBase, kPythonBase + 0x100000);
  s.module("/usr/local/cuda/lib64/libcudart.so.13", kTorchBase, kTorchBase + 0x100000);
  s.native(1, {kTorchBase + 0x10, kPythonBase + 0x30, kPythonBase + 0x20, kPythonBase + 0x10});
  s.symbol(kPythonBase + 0x10, "main", "/work/app.cu", 40);
  s.symbol(kPythonBase + 0x20, "relu(float*, int)", "/work/app.cu", 12);
  s.symbol(kPythonBase + 0x30, "__device_stub__Z11relu_kernelPfi(float*, int)", "/tmp/app.cudafe1.stub.c", 3);
  s.symbol(kTorchBase + 0x10, "cudaLaunchKernel");
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "stub.trace"), inputs);
  tools::StackFormatter formatter;
  EXPECT_EQ(formatter.call_site(*model.find(kSection), 1, 0), "relu(float*, int) (app.cu:12)");
}

// The toolkit's inline wrappers are compiled into the program, so they are
// not in a runtime module: <<<>>> reaches the runtime through nvcc's
// __cudaLaunchKernel_helper and cudaLaunchKernel<char> (cuda_runtime.h),
// cudaMalloc(&p, n) through the cudaMalloc<T> template. The call site is
// the program's line that used them.
TEST(StackFormatter, TheToolkitsInlineWrappersAreNotTheCallSite) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 11, .argv = {"./app"}});
  SyntheticStacks s(trace, kSection);
  s.module("/work/app", kPythonBase, kPythonBase + 0x100000);
  s.module("/usr/local/cuda/lib64/libcudart.so.13", kTorchBase, kTorchBase + 0x100000);
  s.native(1, {kTorchBase + 0x10, kPythonBase + 0x50, kPythonBase + 0x40, kPythonBase + 0x30, kPythonBase + 0x10});
  s.native(2, {kTorchBase + 0x20, kPythonBase + 0x60, kPythonBase + 0x14});
  // <<<>>> in main: nvcc's host function named as the kernel, at the
  // kernel's definition (line 5), calls the stub.
  s.native(3, {kTorchBase + 0x10, kPythonBase + 0x50, kPythonBase + 0x40, kPythonBase + 0x30, kPythonBase + 0x70,
               kPythonBase + 0x18});
  s.symbol(kPythonBase + 0x18, "main", "/work/app.cu", 48);
  s.symbol(kPythonBase + 0x70, "relu_kernel(float*, int)", "/work/app.cu", 5);
  s.symbol(kPythonBase + 0x10, "main", "/work/app.cu", 40);
  s.symbol(kPythonBase + 0x14, "main", "/work/app.cu", 44);
  s.symbol(kPythonBase + 0x30, "__device_stub__Z11relu_kernelPfi(float*, int)", "/tmp/app.cudafe1.stub.c", 3);
  s.symbol(kPythonBase + 0x40, "cudaError cudaLaunchKernel<char>(char const*, dim3, dim3, void**, unsigned long, "
           "CUstream_st*)", "/usr/local/cuda/include/cuda_runtime.h", 216);
  s.symbol(kPythonBase + 0x50, "__cudaLaunchKernel_helper(void const*, dim3, dim3, void**, unsigned long, "
           "CUstream_st*)", "/usr/local/cuda/include/crt/device_functions.h", 2963);
  s.symbol(kPythonBase + 0x60, "cudaError cudaMalloc<float>(float**, unsigned long)",
           "/usr/local/cuda/include/cuda_runtime.h", 879);
  s.symbol(kTorchBase + 0x10, "cudaLaunchKernel");
  s.symbol(kTorchBase + 0x20, "cudaMalloc");
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "wrappers.trace"), inputs);
  tools::StackFormatter formatter;
  EXPECT_EQ(formatter.call_site(*model.find(kSection), 1, 0), "main (app.cu:40)");
  EXPECT_EQ(formatter.call_site(*model.find(kSection), 2, 0), "main (app.cu:44)");
  EXPECT_EQ(formatter.call_site(*model.find(kSection), 3, 0), "main (app.cu:48)");
}

// A GEMM through cuBLAS: the innermost frames are the runtime's and the
// vendor libraries' (and one of the shim's, had the walker let it through);
// the call site is the user's frame that called the library, known by the
// frames' module names.
constexpr uint64_t kAppBase = 0x500000;
constexpr uint64_t kCudartBase = 0x7f1000000000;
constexpr uint64_t kCublasBase = 0x7f2000000000;
constexpr uint64_t kCublasLtBase = 0x7f3000000000;
constexpr uint64_t kShimBase = 0x7f4000000000;

void cublas_program(TraceBuilder& trace) {
  trace.process(kSection, {.pid = 12, .argv = {"./app"}});
  SyntheticStacks s(trace, kSection);
  s.module("/work/app", kAppBase, kAppBase + 0x100000);
  s.module("/usr/local/cuda/lib64/libcudart.so.13", kCudartBase, kCudartBase + 0x100000);
  s.module("/usr/local/cuda/lib64/libcublas.so.13.0.2", kCublasBase, kCublasBase + 0x100000);
  s.module("/usr/local/cuda/lib64/libcublasLt.so.13", kCublasLtBase, kCublasLtBase + 0x100000);
  s.module("/opt/proflaunch/lib/libproflaunch.so", kShimBase, kShimBase + 0x100000);
  // Root first: main, train_step, cublasSgemm_v2, an internal of cuBLASLt,
  // cudaLaunchKernel, the shim's hook.
  s.native(1, {kShimBase + 0x10, kCudartBase + 0x10, kCublasLtBase + 0x20, kCublasBase + 0x10, kAppBase + 0x20,
               kAppBase + 0x10});
  s.symbol(kAppBase + 0x10, "main", "/work/app.cpp", 80);
  s.symbol(kAppBase + 0x20, "train_step(Model&)", "/work/app.cpp", 42);
  s.symbol(kCublasBase + 0x10, "cublasSgemm_v2", "/src/cublas_api.cpp", 900);
  s.symbol(kCublasLtBase + 0x20, "cublasLtMatmul", "/src/lt.cpp", 77);
  s.symbol(kCudartBase + 0x10, "cudaLaunchKernel", "/src/cudart.cpp", 10);
  s.symbol(kShimBase + 0x10, "proflaunch::on_launch", "/src/hooks.cpp", 5);
  // Every frame inside the libraries (the stack cut at the depth limit).
  s.native(2, {kCudartBase + 0x10, kCublasLtBase + 0x20, kCublasBase + 0x10}, kStackTruncated);
  // The same native stack under a Python program: the Python frame wins.
  s.python(3, {{"/home/me/venv/lib/python3.12/site-packages/torch/nn/functional.py", "linear", 2300, true},
               {"/home/me/train.py", "step", 42, true}});
}

TEST(CallSiteAttribution, TheCallSiteIsTheUsersFrameThatCalledTheVendorLibrary) {
  TraceBuilder trace;
  cublas_program(trace);
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "cublas.trace"), inputs);
  const tools::SectionModel& section = *model.find(kSection);
  tools::StackFormatter formatter;
  const auto site = formatter.attribute(section, 1, 0);
  EXPECT_EQ(site.text, "train_step(Model&) (app.cpp:42)");
  EXPECT_EQ(site.function, "train_step(Model&)");
  EXPECT_EQ(site.file, "/work/app.cpp");
  EXPECT_EQ(site.line, 42u);
  EXPECT_EQ(site.module, "app");
  EXPECT_FALSE(site.python);
  EXPECT_EQ(formatter.call_site(section, 1, 0), "train_step(Model&) (app.cpp:42)");
  // The frames stepped over are still in the stack.
  const auto frames = formatter.frames(section, 1, 0);
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_EQ(frames[2], "cublasSgemm_v2 (cublas_api.cpp:900)");
  EXPECT_EQ(frames[5], "proflaunch::on_launch (hooks.cpp:5)");
}

TEST(CallSiteAttribution, WhenEveryFrameIsALibrarysTheEntryPointTheUserCalledIsTheSite) {
  TraceBuilder trace;
  cublas_program(trace);
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "cublas_cut.trace"), inputs);
  tools::StackFormatter formatter;
  const auto site = formatter.attribute(*model.find(kSection), 2, 0);
  EXPECT_EQ(site.text, "cublasSgemm_v2 (cublas_api.cpp:900)");
  EXPECT_EQ(site.module, "libcublas.so.13.0.2");
}

TEST(CallSiteAttribution, APythonFrameWinsOverNativeOnes) {
  TraceBuilder trace;
  cublas_program(trace);
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "cublas_python.trace"), inputs);
  tools::StackFormatter formatter;
  const auto site = formatter.attribute(*model.find(kSection), 1, 3);
  EXPECT_TRUE(site.python);
  EXPECT_EQ(site.text, "/home/me/venv/lib/python3.12/site-packages/torch/nn/functional.py:2300 linear");
  EXPECT_EQ(site.function, "linear");
  EXPECT_EQ(site.line, 2300u);
  EXPECT_EQ(site.module, "torch") << "a site-packages file's package";
}

TEST(CallSiteAttribution, VendorModulesAreKnownByTheirFileNames) {
  for (const char* path : {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcudart.so.13.0.48", "/x/libcublasLt.so",
                           "/x/libcudnn_cnn.so.9", "/x/libnccl.so.2", "/opt/rocm/lib/libamdhip64.so.6",
                           "/opt/rocm/lib/librocblas.so.4", "/opt/rocm/lib/libMIOpen.so.1", "/x/librccl.so.1",
                           "/x/libcupti.so.13", "/x/libnvrtc.so.13", "/build/preload/libproflaunch.so",
                           "/venv/lib/python3.12/site-packages/torch/lib/libcudart-d0da41ae.so.11.0"})
    EXPECT_TRUE(tools::is_runtime_or_vendor_module(path)) << path;
  for (const char* path : {"/work/app", "/x/libtorch_cuda.so", "/x/libcudaext.so", "/x/libmycublas.so",
                           "/x/libcublas_helpers.a", "/usr/lib/libc.so.6", "/x/libcublas-extras.so", ""})
    EXPECT_FALSE(tools::is_runtime_or_vendor_module(path)) << path;
}

TEST(CallSiteAttribution, PythonFilesGroupUnderTheirPackage) {
  EXPECT_EQ(tools::python_package("/usr/lib/python3/dist-packages/numpy/core/numeric.py"), "numpy");
  EXPECT_EQ(tools::python_package("/venv/lib/python3.12/site-packages/six.py"), "six");
  EXPECT_EQ(tools::python_package("/home/me/proj/train.py"), "/home/me/proj");
  EXPECT_EQ(tools::python_package("train.py"), "train.py");
}

TEST(StackFormatter, WithoutNamesFramesShowModuleAndOffsetOrTheAddress) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 10});
  SyntheticStacks s(trace, kSection);
  s.module("/nonexistent/libgone.so", kTorchBase, kTorchBase + 0x1000);
  s.native(1, {kTorchBase + 0x123, 0x1234});
  std::vector<tools::InputTrace> inputs;
  const tools::TraceModel model = load_model(write_trace(trace, "bare.trace"), inputs);
  tools::StackFormatter formatter;
  EXPECT_EQ(formatter.frames(*model.find(kSection), 1, 0, "cuMemcpyHtoD"),
            (std::vector<std::string>{"0x1234", "libgone.so+0x123", "cuMemcpyHtoD"}));
  ASSERT_EQ(formatter.problems().size(), 1u);
  EXPECT_NE(formatter.problems()[0].find("/nonexistent/libgone.so"), std::string::npos);
}

TEST(ConvertStacks, EachCallStackGoesToItsOwnThreadsPrecedingCall) {
  // Small chunks: the launch and its CallStack land in different chunks, with
  // another thread's call between them.
  TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 200});
  python_program(trace);
  const uint16_t launch_api = trace.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
  const uint16_t sync_api = trace.api(kSection, "cuCtxSynchronize", ApiDomain::kDriver);
  const uint16_t other_api = trace.api(kSection, "cuInit", ApiDomain::kDriver);
  KernelLaunchRecord launch{};
  launch.span = {.begin_ns = 1'000'001'000, .end_ns = 1'000'002'000, .correlation_id = 10, .api = launch_api};
  trace.event(kSection, 1, launch);
  ApiCallRecord other{};
  other.span = {.begin_ns = 1'000'001'500, .end_ns = 1'000'001'600, .correlation_id = 11, .api = other_api};
  trace.event(kSection, 2, other);
  CallStackRecord stack{};
  stack.point = static_cast<uint8_t>(StackPoint::kLaunch);
  stack.correlation_id = 10;
  stack.native_stack = 1;
  stack.python_stack = 1;
  trace.event(kSection, 1, stack);
  // A sync followed by a stack that is not its own: not attached.
  SynchronizeRecord sync{};
  sync.span = {.begin_ns = 1'000'003'000, .end_ns = 1'000'004'000, .correlation_id = 20, .api = sync_api};
  trace.event(kSection, 1, sync);
  stack.correlation_id = 99;
  trace.event(kSection, 1, stack);
  GpuActivityRecord gpu{};
  gpu.correlation_id = 10;
  gpu.start_ns = 1'000'001'500;
  gpu.end_ns = 1'000'002'500;
  gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
  trace.event(kSection, 3, gpu);

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const JsonValue* launch_slice = out.slice_named("cuLaunchKernel");
  ASSERT_NE(launch_slice, nullptr);
  const std::string text = (*launch_slice)["args"]["stack"].str();
  EXPECT_EQ(text.substr(0, text.find('\n')), "train.py:50 <module>");
  EXPECT_EQ(text.substr(text.rfind('\n') + 1), "cuLaunchKernel") << "leaf last";
  EXPECT_TRUE(launch_slice->find("bind_id") != nullptr) << "still joined to its GPU work";
  EXPECT_FALSE((*out.slice_named("cuCtxSynchronize"))["args"].has("stack"));
  EXPECT_FALSE((*out.slice_named("cuInit"))["args"].has("stack"));
  std::string checker_output;
  EXPECT_EQ(run_checker(out.json_path, &checker_output), 0) << checker_output;

  tools::ConvertCommand without;
  without.stacks = false;
  const ConvertedTrace plain = convert_trace(trace, without);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE((*plain.slice_named("cuLaunchKernel"))["args"].has("stack")) << "--no-stacks";
}

TEST(CallSiteStats, RanksCallSitesByTheGpuTimeTheyLaunched) {
  TraceBuilder trace;
  python_program(trace);
  SyntheticStacks s(trace, kSection);
  s.python(2, {{"train.py", "evaluate", 60, true}});
  const uint16_t launch_api = trace.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
  uint64_t correlation = 1;
  auto launch = [&](uint32_t python_stack, uint64_t gpu_ns) {
    KernelLaunchRecord record{};
    record.span = {.begin_ns = 1'000'000'000 + correlation * 10'000, .end_ns = 1'000'000'100 + correlation * 10'000,
                   .correlation_id = correlation, .api = launch_api};
    trace.event(kSection, 1, record);
    CallStackRecord stack{};
    stack.point = static_cast<uint8_t>(StackPoint::kLaunch);
    stack.correlation_id = correlation;
    stack.native_stack = 1;
    stack.python_stack = python_stack;
    trace.event(kSection, 1, stack);
    GpuActivityRecord gpu{};
    gpu.correlation_id = correlation;
    gpu.start_ns = record.span.begin_ns + 50;
    gpu.end_ns = gpu.start_ns + gpu_ns;
    gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace.event(kSection, 2, gpu);
    ++correlation;
  };
  for (int i = 0; i < 3; ++i) launch(1, 100);  // training step: 3 x 100 ns
  launch(2, 1000);                             // evaluation: 1 x 1000 ns

  tools::StatsCommand command;
  command.inputs = {write_trace(trace, "sites.trace")};
  command.sections = {"call-sites"};
  command.csv = true;
  const CommandOutput out = run_stats_on(command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::vector<std::string> rows;
  std::istringstream lines(out.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find("train.py") != std::string::npos) rows.push_back(line);
  ASSERT_EQ(rows.size(), 2u) << out.out;
  EXPECT_NE(rows[0].find(",1000,1,train.py:60 evaluate,"), std::string::npos) << rows[0];
  EXPECT_NE(rows[1].find(",300,3,model.py:7 Layer.forward,"), std::string::npos) << rows[1];
}

}  // namespace
}  // namespace proflaunch::testing
