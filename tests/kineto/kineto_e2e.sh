#!/usr/bin/env bash
# Real traces on the simulated GPU stack, converted by `proftrace convert`,
# read as PyTorch profiler (Kineto) traces by check_kineto_trace.py:
#  - the training loop: kernels (runtime <<<>>> and the cuBLAS-like library's
#    driver launches), copies and memsets, each kernel with its resources and
#    occupancy, the device's properties;
#  - the NVTX program: ranges on CPU threads and their GPU projections;
#  - an NCCL job of two ranks under the torchrun-like launcher, a file per
#    rank: each file says its rank, the world size and the backend, and the
#    two files, converted apart, are on one clock.
# Steps: ProfilerStep#N as many as the program ran (the training loop's by
# periodicity, the NVTX program's by its step range); the training loop's
# cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent and
# cudaDeviceSynchronize each as Kineto's cuda_sync event.
#   kineto_e2e.sh PROFLAUNCH PROFTRACE PYTHON3 CHECKER LIBRARY_PATH TRAINING_LOOP NVTX_RANGES TORCHRUN_LIKE NCCL_RANKS
set -euo pipefail
proflaunch=$1 proftrace=$2 python=$3 checker=$4 library_path=$5
training_loop=$6 nvtx_ranges=$7 torchrun_like=$8 nccl_ranks=$9
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$library_path
unset LD_PRELOAD PROFLAUNCH_GPU_TIMING SIMGPU_KERNEL_COSTS

check() {  # check NAME.json FLAGS...
  local json=$1
  shift
  echo "== $json $*"
  "$python" "$checker" "$work/$json" --summary "$@"
}

"$proflaunch" -q -o "$work/train.trace" -- "$training_loop" --steps 6 >/dev/null
"$proftrace" convert -q "$work/train.trace" -o "$work/train.json"
check train.json --require-categories kernel,gpu_memcpy,gpu_memset,cuda_runtime,cuda_driver \
  --require-kernel-details --require-device-properties --require-steps 6 \
  --require-sync-kinds "Stream Sync,Event Sync,Context Sync,Stream Wait Event"
grep -q '"step_source":"periodicity"' "$work/train.json" || { echo "train.json: steps not by periodicity"; exit 1; }

"$proflaunch" -q -o "$work/nvtx.trace" -- "$nvtx_ranges" --steps 4 >/dev/null
# Its steps are named "step 0", "step 1"...: no one name repeats, so they are
# found by the range each holds (--step-range forward). Without it, its most
# frequent top-level range is a module's bookkeeping that launches no GPU
# work, which is no step: none are written.
"$proftrace" convert -q "$work/nvtx.trace" -o "$work/nvtx-nosteps.json"
check nvtx-nosteps.json --require-steps 0
"$proftrace" convert -q --step-range forward "$work/nvtx.trace" -o "$work/nvtx.json"
check nvtx.json --require-categories user_annotation,gpu_user_annotation,gpu_memcpy,gpu_memset,cuda_runtime \
  --require-steps 4
grep -q '"step_source":"step-range"' "$work/nvtx.json" || { echo "nvtx.json: steps not by --step-range"; exit 1; }

"$torchrun_like" --nproc 2 "$proflaunch" -q -o "$work/rank%q{RANK}.trace" -- \
  "$nccl_ranks" --ops allreduce,allgather --iterations 2 >/dev/null
for rank in 0 1; do
  "$proftrace" convert -q "$work/rank$rank.trace" -o "$work/rank$rank.json"
  check "rank$rank.json" --require-rank "$rank" --require-world-size 2 --require-backend nccl \
    --require-categories kernel --require-device-properties
done
# Converted apart, the two files are on one clock (Kineto's
# baseTimeNanoseconds): each all-reduce and all-gather ends at the same ts.
check rank1.json --aligned-with "$work/rank0.json"
