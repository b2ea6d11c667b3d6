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

# convert ARGS... -o X.json: `proftrace convert`, and where the e2e checkers
# are given (PFTRACE_CHECKER, TRACE_PROCESSOR), its protobuf twin too, both
# checked by tests/perfetto/pftrace_check.py and loaded in Perfetto's importer
# (as run_proftrace does for the other e2e tests).
convert() {
  "$proftrace" convert -q "$@"
  [[ -n ${PFTRACE_CHECKER:-} ]] || return 0
  local args=("$@") i json=
  for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    if [[ ${args[i]} == -o ]]; then json=${args[i + 1]}; args[i + 1]=$json.pftrace; fi
  done
  "$proftrace" convert -q "${args[@]}"
  "$python" "$PFTRACE_CHECKER" "$json.pftrace" --json "$json" >/dev/null
}

check() {  # check NAME.json FLAGS...
  local json=$1
  shift
  echo "== $json $*"
  "$python" "$checker" "$work/$json" --summary "$@"
}

"$proflaunch" -q -o "$work/train.trace" -- "$training_loop" --steps 6 >/dev/null
convert "$work/train.trace" -o "$work/train.json"
check train.json --require-categories kernel,gpu_memcpy,gpu_memset,cuda_runtime,cuda_driver \
  --require-kernel-details --require-device-properties --require-steps 6 \
  --require-sync-kinds "Stream Sync,Event Sync,Context Sync,Stream Wait Event"
grep -q '"step_source":"periodicity"' "$work/train.json" || { echo "train.json: steps not by periodicity"; exit 1; }
# The loop records each batch's event on the copy stream; the compute stream
# waits for it (Stream Wait Event) and the host does before reusing its
# buffer (Event Sync): each wait names that record call (same event) and the
# copy stream, which is not the waiting compute stream. The first sync of
# each buffer's event comes before any record of it: unknown (-1) is right.
"$python" - "$work/train.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
records = {e["args"]["correlation"]: e for e in events
           if e.get("cat") == "cuda_runtime" and e.get("name") == "cudaEventRecord"}
waits = [e for e in events if e.get("cat") == "cuda_sync" and e["name"] in ("Event Sync", "Stream Wait Event")]
assert waits, "no waits on events"
kinds = set()
for wait in waits:
    args = wait["args"]
    if args["wait_on_cuda_event_record_corr_id"] == -1:
        assert args["wait_on_stream"] == -1, args
        assert not any(int(r["args"]["event"], 16) == args["wait_on_cuda_event_id"] and r["ts"] <= wait["ts"]
                       for r in records.values()), f"{args}: its event was recorded before"
        continue
    record = records.get(args["wait_on_cuda_event_record_corr_id"])
    assert record is not None, f"{args}: not a cudaEventRecord"
    assert record["ts"] <= wait["ts"], f"{args}: recorded after the wait began"
    assert int(record["args"]["event"], 16) == args["wait_on_cuda_event_id"], f"{args}: another event"
    assert record["args"]["target_stream"] == str(args["wait_on_stream"]), f"{args}: not the record's stream"
    if wait["name"] == "Stream Wait Event":
        assert args["wait_on_stream"] != args["stream"], f"{args}: waits on its own stream"
    kinds.add(wait["name"])
assert kinds == {"Event Sync", "Stream Wait Event"}, kinds
print(f"{len(waits)} waits on events name their record and stream")
PY

"$proflaunch" -q -o "$work/nvtx.trace" -- "$nvtx_ranges" --steps 4 >/dev/null
# Its steps are named "step 0", "step 1"...: no one name repeats, so they are
# found by the range each holds (--step-range forward). Without it, its most
# frequent top-level range is a module's bookkeeping that launches no GPU
# work, which is no step: none are written.
convert "$work/nvtx.trace" -o "$work/nvtx-nosteps.json"
check nvtx-nosteps.json --require-steps 0
convert --step-range forward "$work/nvtx.trace" -o "$work/nvtx.json"
check nvtx.json --require-categories user_annotation,gpu_user_annotation,gpu_memcpy,gpu_memset,cuda_runtime \
  --require-steps 4
grep -q '"step_source":"step-range"' "$work/nvtx.json" || { echo "nvtx.json: steps not by --step-range"; exit 1; }

"$torchrun_like" --nproc 2 "$proflaunch" -q -o "$work/rank%q{RANK}.trace" -- \
  "$nccl_ranks" --ops allreduce,allgather --iterations 2 >/dev/null
for rank in 0 1; do
  convert "$work/rank$rank.trace" -o "$work/rank$rank.json"
  check "rank$rank.json" --require-rank "$rank" --require-world-size 2 --require-backend nccl \
    --require-categories kernel --require-device-properties
done
# Converted apart, the two files are on one clock (Kineto's
# baseTimeNanoseconds): each all-reduce and all-gather ends at the same ts.
check rank1.json --aligned-with "$work/rank0.json"
