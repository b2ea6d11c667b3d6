#!/usr/bin/env bash
# Installs what is missing, builds, profiles the bundled sample training loop
# on the simulated GPU stack (tests/simgpu), converts the trace for Perfetto,
# writes the device-memory page and prints the summary tables.
#
#   scripts/run-sample.sh [--steps N]     output in out/: sample.trace, sample.json, sample-memory.html
#   scripts/run-sample.sh --hip [--steps N]   the HIP training loop on the simulated AMD stack:
#                                             out/hip-sample.trace, .json, -memory.html
set -euo pipefail
cd "$(dirname "$0")/.."
steps=200
hip=0
while (($#)); do
  case "$1" in
    --hip) hip=1; shift ;;
    --steps) steps=${2:?--steps needs a number}; shift 2 ;;
    *) echo "usage: scripts/run-sample.sh [--hip] [--steps N]" >&2; exit 64 ;;
  esac
done

# ccache shares objects between clones at different paths (as scripts/test.sh).
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
# The build's output goes to out/build.log; its end is shown when it fails.
build_quietly() {
  mkdir -p out
  if ! scripts/build.sh "$@" >out/build.log 2>&1; then
    tail -n 40 out/build.log >&2
    echo "run-sample: the build failed; its output is in out/build.log" >&2
    exit 1
  fi
}

if ((hip)); then
  scripts/install-deps.sh --sample --with-amd
  # A new build: only what the samples need (-Dtests=false); an existing one
  # keeps its other options and only turns HIP on.
  setup=()
  [ -f build/meson-private/coredata.dat ] || setup=(-Dtests=false)
  build_quietly "${setup[@]}" -Dhip=enabled --target sample-hip
  b=build
  program=$b/tests/simgpu/programs/hip/hip_training
  if [ ! -x "$program" ]; then
    echo "run-sample: $program was not built (it needs Debian's hipcc)" >&2
    exit 1
  fi
  # The simulated HIP runtime stands in for AMD's: no GPU here. Kernels only
  # take time on it; these are their modelled costs.
  export LD_LIBRARY_PATH="$b/tests/simgpu/hip${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export SIMGPU_KERNEL_COSTS='_Z6matmulPKfS0_Pfi=400us,_Z8backwardPKfPfi=250us,_Z10sgd_updatePfPKffi=60us,*=20us'
  mkdir -p out
  "$b/launcher/proflaunch" --force -o out/hip-sample.trace -- "$program" --steps "$steps" \
    --module "$b/tests/simgpu/programs/hip/scale_module.co"
  "$b/tools/proftrace" info out/hip-sample.trace
  "$b/tools/proftrace" convert out/hip-sample.trace -o out/hip-sample.json
  "$b/tools/proftrace" memory out/hip-sample.trace -o out/hip-sample-memory.html
  "$b/tools/proftrace" stats --section gpu-kernels --section call-sites out/hip-sample.trace
  "$b/tools/proftrace" report out/hip-sample.trace -o out/hip-sample-report.html
  echo "run-sample: open out/hip-sample.json in https://ui.perfetto.dev, out/hip-sample-report.html and out/hip-sample-memory.html in a browser"
  exit 0
fi

scripts/install-deps.sh --sample
# A new build is configured for the sample only: no tests or benchmarks
# (-Dtests=false: their frameworks are not installed; scripts/test.sh sets
# such a build up again), no HIP hooks (-Dhip=disabled: the CUDA sample makes
# no HIP call, and the same steps are built whatever is installed). An
# existing build (scripts/test.sh's) is used as it is: it has the sample's
# targets.
setup=()
[ -f build/meson-private/coredata.dat ] || setup=(-Dtests=false -Dhip=disabled)
build_quietly "${setup[@]}" --target sample

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
"$b/tools/proftrace" report out/sample.trace -o out/sample-report.html
"$b/tools/proftrace" stats --section gpu-kernels --section call-sites out/sample.trace
echo "run-sample: open out/sample.json in https://ui.perfetto.dev (or: $b/tools/proftrace view out/sample.trace), out/sample-report.html and out/sample-memory.html in a browser"
