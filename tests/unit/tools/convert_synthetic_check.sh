#!/usr/bin/env bash
# The whole tool chain as a user runs it: a synthetic multi-process trace,
# `proftrace convert`, then the Perfetto JSON checker on the result, and the
# structure it must have (4 processes on 4 GPUs, every launch joined).
#   convert_synthetic_check.sh SYNTHETIC_TRACE_EXE PROFTRACE_EXE PYTHON3 CHECKER
set -euo pipefail
synthetic=$1 proftrace=$2 python=$3 checker=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$synthetic" -n 20000 -o "$work/run.trace" --processes 4 --threads 3 2>/dev/null
"$proftrace" convert -q "$work/run.trace" -o "$work/run.json"
summary=$("$python" "$checker" --summary "$work/run.json")
echo "$summary"
"$python" - "$summary" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
assert s["gpu_processes"] == 4, s           # one GPU per synthetic process
assert s["processes"] == 8, s               # 4 traced + 4 GPU processes
assert s["flows"] > 9000, s                 # every launch/copy joined to its GPU work
PY

# Without GPU timing: API slices only and no flows; the only GPU-side
# events are Kineto's cuda_sync, one per synchronizing call (the host call's
# span), on the device's "CUDA syncs" track.
"$synthetic" -n 5000 -o "$work/untimed.trace" --no-gpu-timing 2>/dev/null
"$proftrace" convert -q "$work/untimed.trace" -o "$work/untimed.json"
summary=$("$python" "$checker" --summary "$work/untimed.json")
echo "$summary"
"$python" - "$summary" "$work/untimed.json" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
events = json.load(open(sys.argv[2]))["traceEvents"]
syncs = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cuda_sync"]
assert s["gpu_processes"] == (1 if syncs else 0) and s["flows"] == 0 and s["slices"] == 5000 + len(syncs), s
assert not any(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") for e in events), "GPU work without timing"
PY
