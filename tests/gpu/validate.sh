#!/usr/bin/env bash
# Validation on a real NVIDIA GPU, for users who have one: builds small
# programs with the toolkit, traces each with both GPU-time backends
# (CUPTI and events) and checks kernel names and counts in the traces.
#
#   tests/gpu/validate.sh [build-dir]      (default: build)
#   VALIDATE_KEEP=DIR tests/gpu/validate.sh   also keeps the traces in DIR
#
# On a GPU machine that cannot build the project, stage a build made
# elsewhere with tests/gpu/stage.sh DIR and run tests/gpu/validate.sh DIR.
#
# Runs: an nvcc program (8 launches of one kernel); one SGEMM through the
# toolkit's real cuBLAS; a CUDA graph captured once and replayed 4 times
# (CUPTI must time each replay's kernel node); the capture probe
# (capture_probe.cu), whose output must not change under the shim; a torch
# training step and a torch.cuda.graphs replay if `import torch` works and
# sees a GPU; device metrics through the real NVML (--gpu-metrics) on the nvcc
# program (its device 0 must have utilization, memory, clocks, power,
# temperature and PCIe link, or a line saying the device does not have one);
# the GPU's own counters (CUPTI PM sampling): SM active, or the line saying
# profiling counters are restricted to admin users; then prints the launch cost untraced and traced (launch_cost.cu,
# not a check). Without a GPU it says so and exits 0.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
proflaunch=$build/launcher/proflaunch
proftrace=$build/tools/proftrace
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
keep=${VALIDATE_KEEP:-}
trap '[ -n "$keep" ] && mkdir -p "$keep" && cp "$work"/*.trace "$keep"/ 2>/dev/null; rm -rf "$work"' EXIT

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "validate: no NVIDIA GPU here (nvidia-smi lists none): skipped"
  exit 0
fi
for tool in "$proflaunch" "$proftrace" "$cuda/bin/nvcc"; do
  [ -x "$tool" ] || { echo "validate: $tool missing (build first: meson setup build && ninja -C build)"; exit 1; }
done

failures=0
check() {  # name trace kernel-substring expected-count backend [stats-section]
  local name=$1 trace=$2 kernel=$3 want=$4 backend=$5 section=${6:-}
  local got
  got=$("$proftrace" dump "$trace" | grep -c "^GpuActivity .*source=$([ "$backend" = cupti ] && echo 2 || echo 1)" || true)
  local launches
  launches=$("$proftrace" stats ${section:+--section "$section"} "$trace" 2>/dev/null | grep -c -- "$kernel" || true)
  echo "validate: $name [$backend]: $got GPU activities, kernel '$kernel' in stats: $launches line(s), info: $("$proftrace" info "$trace" | grep '^gpu timing' | tr '\n' ' ')"
  if [ "$got" -lt "$want" ] || [ "$launches" -lt 1 ]; then
    echo "validate: $name [$backend]: FAILED (wanted at least $want activities)"
    failures=$((failures + 1))
  fi
}

cat > "$work/kernels.cu" <<'CU'
#include <cstdio>
__global__ void validate_scale(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }
int main(int argc, char** argv) {
  const int n = 1 << 20; float* x = nullptr;
  cudaMalloc(&x, n * sizeof(float)); cudaMemset(x, 0, n * sizeof(float));
  const bool graph = argc > 1;
  cudaStream_t s; cudaStreamCreate(&s);
  if (!graph) { for (int i = 0; i < 8; ++i) validate_scale<<<n / 256, 256, 0, s>>>(x, n); }
  else {
    cudaGraph_t g; cudaGraphExec_t e;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    validate_scale<<<n / 256, 256, 0, s>>>(x, n);
    cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&e, g, 0);
    for (int i = 0; i < 4; ++i) cudaGraphLaunch(e, s);
  }
  cudaStreamSynchronize(s);
  printf("kernels: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
CU
cat > "$work/sgemm.cu" <<'CU'
#include <cublas_v2.h>
#include <cstdio>
int main() {
  const int n = 512; float *a, *b, *c; cublasHandle_t h; const float one = 1, zero = 0;
  cudaMalloc(&a, n * n * 4); cudaMalloc(&b, n * n * 4); cudaMalloc(&c, n * n * 4);
  cublasCreate(&h);
  cublasStatus_t st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
  cudaDeviceSynchronize(); printf("sgemm: %d\n", int(st)); cublasDestroy(h); return 0;
}
CU
"$cuda/bin/nvcc" -cudart shared -o "$work/kernels" "$work/kernels.cu" || exit 1
"$cuda/bin/nvcc" -cudart shared -o "$work/sgemm" "$work/sgemm.cu" -lcublas || exit 1
"$cuda/bin/nvcc" -cudart shared -o "$work/capture_probe" "$here/tests/gpu/capture_probe.cu" -lcuda || exit 1
"$cuda/bin/nvcc" -O2 -cudart shared -o "$work/launch_cost" "$here/tests/gpu/launch_cost.cu" || exit 1

same_output() {  # name backend untraced-output traced-output
  if [ "$3" = "$4" ]; then echo "validate: $1 [$2]: output unchanged under the shim"
  else echo "validate: $1 [$2]: FAILED, the output changed under the shim:"; diff <(echo "$3") <(echo "$4"); failures=$((failures + 1)); fi
}
# The probed calls' return codes depend on timing (an event query): only the verdicts are compared.
probe() { "$@" | sed 's/ probe=-*[0-9]*//'; }
probe_plain=$(probe "$work/capture_probe")

for backend in cupti events; do
  "$proflaunch" --gpu-timing=$backend -o "$work/k-$backend.trace" -- "$work/kernels" && check nvcc "$work/k-$backend.trace" validate_scale 8 $backend
  # CUPTI times each replay's kernel node (gpu-kernels names it); events time a replay as one unit (graphs).
  if [ "$backend" = cupti ]; then graph_kernel=validate_scale graph_section=; else graph_kernel='kernel 1' graph_section=graphs; fi
  "$proflaunch" --gpu-timing=$backend -o "$work/g-$backend.trace" -- "$work/kernels" graph && check graph "$work/g-$backend.trace" "$graph_kernel" 4 $backend $graph_section
  "$proflaunch" --gpu-timing=$backend -o "$work/s-$backend.trace" -- "$work/sgemm" && check cublas "$work/s-$backend.trace" gemm 1 $backend
  same_output capture_probe $backend "$probe_plain" "$(probe "$proflaunch" -q --gpu-timing=$backend -o "$work/p-$backend.trace" -- "$work/capture_probe")"
done

# Device metrics through the real NVML (launcher/gpu_metrics): a busy GPU's
# utilization, its memory, its clocks; the same UUID as the traced device.
"$proflaunch" --gpu-metrics=20 -o "$work/m.trace" -- "$work/kernels" >/dev/null
metrics=$("$proftrace" stats --section gpu-metrics "$work/m.trace" 2>&1)
echo "$metrics" | sed 's/^/validate: nvml: /' | head -24
for metric in gpu_utilization memory_used sm_clock power temperature pcie_link_gen; do
  if ! echo "$metrics" | grep -q "^GPU 0 (pid [0-9]*) *$metric "; then
    if echo "$metrics" | grep -q "$metric left out"; then echo "validate: nvml: $metric not supported here (said so)"
    else echo "validate: nvml: FAILED, no $metric on the traced device 0"; failures=$((failures + 1)); fi
  fi
done
# The GPU's own counters (CUPTI PM sampling, --gpu-metrics-counters): SM
# active on the traced device, or the one line that says profiling counters
# are restricted (NVreg_RestrictProfilingToAdminUsers) - never a silent nothing.
pm_err=$("$proflaunch" --gpu-metrics-counters=DEFAULT -o "$work/pm.trace" -- "$work/kernels" 2>&1 >/dev/null)
pm=$("$proftrace" stats --section gpu-metrics "$work/pm.trace" 2>&1)
echo "$pm" | grep -E "sm_active|left out" | sed 's/^/validate: pm-sampling: /' | head -12
if echo "$pm" | grep -q "^GPU 0 (pid [0-9]*) *sm_active "; then echo "validate: pm-sampling: sm_active sampled"
elif echo "$pm_err" | grep -q "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; then
  echo "validate: pm-sampling: refused here (restricted to admin users), said so: $(echo "$pm_err" | grep -m1 INSUFFICIENT)"
else echo "validate: pm-sampling: FAILED, no sm_active and no permission line: $pm_err"; failures=$((failures + 1)); fi
nvidia_used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 2>/dev/null | head -1)
echo "validate: nvml: nvidia-smi says device 0 holds ${nvidia_used:-?} MiB now (not a check: the program has exited)"

if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  cat > "$work/step.py" <<'PY'
import torch
m = torch.nn.Linear(1024, 1024).cuda(); opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(64, 1024, device="cuda")
for _ in range(3):
    opt.zero_grad(); m(x).sum().backward(); opt.step()
torch.cuda.synchronize(); print("torch: ok")
PY
  graph_plain=$(python3 "$here/tests/gpu/torch_graph.py")
  for backend in cupti events; do
    "$proflaunch" --gpu-timing=$backend -o "$work/t-$backend.trace" -- python3 "$work/step.py" && check torch "$work/t-$backend.trace" gemm 10 $backend
    same_output torch_graph $backend "$graph_plain" "$("$proflaunch" -q --gpu-timing=$backend -o "$work/tg-$backend.trace" -- python3 "$here/tests/gpu/torch_graph.py")"
  done
else
  echo "validate: torch with a GPU not available: torch step skipped"
fi

# Three rounds, the configurations alternating, so that drift shows as spread.
for round in 1 2 3; do
  echo "validate: launch cost round $round (not a check), untraced: $("$work/launch_cost" 100)"
  for args in "--gpu-timing=none --stacks=none" "--gpu-timing=none" "--gpu-timing=events" "--gpu-timing=cupti"; do
    # shellcheck disable=SC2086
    echo "validate: launch cost round $round, proflaunch $args: $("$proflaunch" -q $args -o "$work/l.trace" --force -- "$work/launch_cost" 100)"
  done
done

if [ "$failures" -ne 0 ]; then echo "validate: $failures check(s) failed"; exit 1; fi
echo "validate: all checks passed"
