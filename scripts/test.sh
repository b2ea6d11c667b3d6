#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
# Four builds (build, build-fuzz, build-asan, build-tsan) take about 9 GB: a full disk
# fails a compile with a message that is easy to miss in the log.
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
echo "test.sh: $((free_kib / 1024 / 1024)) GiB free in $(pwd)"
if [ "${free_kib:-0}" -lt $((12 * 1024 * 1024)) ]; then
  echo "test.sh: warning: under 12 GiB free; the builds need about 9 GiB" >&2
fi
# Each step's wall time, printed at the end (and on a failure): CI's time
# is counted, and this says where it went.
timings=()
step() {  # label, command...
  local label=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  timings+=("$(printf '%-10s %4d s%s' "$label" $((SECONDS - start)) "$( ((status)) && echo "  (failed: $status)")")")
  return $status
}
report() { printf 'test.sh: %s\n' "${timings[@]}" "$(printf '%-10s %4d s' total "$SECONDS")"; }
trap report EXIT

step install scripts/install-deps.sh --with-amd
# ccache (installed above) shares objects between clones at different paths:
# paths under the checkout are hashed relative to it.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
# -Dtests=true -Dhip=enabled: the tests, the benchmarks and HIP, which must
# be found (installed above). A build that scripts/run-sample.sh configured
# for the sample alone is set up again by scripts/build.sh: its compiler
# checks ran before the test packages were installed.
step build scripts/build.sh -Dtests=true -Dhip=enabled
step tests meson test -C build --print-errorlogs --num-processes "$(nproc)" "$@"
# One minute of the soak: the training loop traced, RSS and file growth
# sampled, the trace converted; fails on drops or a failed run.
step soak scripts/soak.sh 60 build/soak
# The fuzzers under ASan and UBSan, 20 s each (their own clang build).
step fuzz scripts/fuzz.sh 20
# Every unit and e2e test again in an ASan+UBSan build (build-asan), then the
# shim's units, the launcher's tests and the threaded e2e programs in a TSan
# build (build-tsan, only the targets those tests need).
step asan scripts/sanitize.sh address
step tsan scripts/sanitize.sh thread
