#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --with-amd
# -Dhip=enabled: a build configured before the HIP packages were installed
# looks again (and fails loudly if they are still missing).
scripts/build.sh -Dhip=enabled
meson test -C build --print-errorlogs --num-processes "$(nproc)" "$@"
# The fuzzers under ASan and UBSan, 20 s each (their own clang build).
scripts/fuzz.sh 20
# Every unit and e2e test again in an ASan+UBSan build (build-asan). TSan
# (scripts/sanitize.sh thread) is not run here yet: see README, Sanitizers.
scripts/sanitize.sh address
