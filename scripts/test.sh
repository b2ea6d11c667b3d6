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
scripts/install-deps.sh --with-amd
# ccache (installed above) shares objects between clones at different paths:
# paths under the checkout are hashed relative to it.
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
# -Dtests=true -Dhip=enabled: the tests, the benchmarks and HIP, which must
# be found (installed above). A build that scripts/run-sample.sh configured
# for the sample alone is set up again by scripts/build.sh: its compiler
# checks ran before the test packages were installed.
scripts/build.sh -Dtests=true -Dhip=enabled
meson test -C build --print-errorlogs --num-processes "$(nproc)" "$@"
# One minute of the soak: the training loop traced, RSS and file growth
# sampled, the trace converted; fails on drops or a failed run.
scripts/soak.sh 60 build/soak
# The fuzzers under ASan and UBSan, 20 s each (their own clang build).
scripts/fuzz.sh 20
# Every unit and e2e test again in an ASan+UBSan build (build-asan), then the
# shim's units, the launcher's tests and the threaded e2e programs in a TSan
# build (build-tsan, only the targets those tests need).
scripts/sanitize.sh address
scripts/sanitize.sh thread
