#!/usr/bin/env bash
# Installs what is missing, builds, profiles the bundled sample training loop
# on the simulated GPU stack (tests/simgpu), converts the trace for Perfetto,
# writes the device-memory page and prints the summary tables.
#
#   scripts/run-sample.sh [--steps N]     output in out/: sample.trace, sample.json, sample-memory.html
set -euo pipefail
cd "$(dirname "$0")/.."
steps=200
if [ "${1:-}" = "--steps" ] && [ -n "${2:-}" ]; then steps=$2; fi

scripts/install-deps.sh
scripts/build.sh >/dev/null

b=build
program=$b/tests/simgpu/programs/training_loop
if [ ! -x "$program" ]; then
  echo "run-sample: $program was not built (it needs nvcc from the CUDA toolkit)" >&2
  exit 1
fi
# The simulated driver and runtime stand in for the NVIDIA ones: no GPU here.
export LD_LIBRARY_PATH="$b/tests/simgpu/driver:$b/tests/simgpu/runtime:$b/tests/simgpu/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

mkdir -p out
"$b/launcher/proflaunch" --force -o out/sample.trace -- "$program" --steps "$steps"
"$b/tools/proftrace" info out/sample.trace
"$b/tools/proftrace" convert out/sample.trace -o out/sample.json
"$b/tools/proftrace" memory out/sample.trace -o out/sample-memory.html
"$b/tools/proftrace" stats --section gpu-kernels --section call-sites out/sample.trace
echo "run-sample: open out/sample.json in https://ui.perfetto.dev, out/sample-memory.html in a browser"
