#!/usr/bin/env bash
# Builds proflaunch with sanitizers and runs tests under them:
#   address  ASan + UBSan (build-asan): every unit and e2e test;
#   thread   TSan (build-tsan): the shim's unit tests and the multi-threaded
#            e2e programs.
# Usage: scripts/sanitize.sh [address|thread|all] [meson test arguments...]
#   (default: all; test names or --suite given after the kind replace the
#   default selection, e.g. scripts/sanitize.sh address e2e_nvtx)
# A finding fails the run. The options below choose how findings are
# reported; tests/sanitizers/lsan.supp lists the leaks of code that is not
# proflaunch's (CPython, the simulated GPU stack), each with its evidence.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-all}
(($#)) && shift
selection=("$@")

# handle_segv/handle_abort=0: test programs crash on purpose, and the shim's
# crash handler must see the real signal as it does in a program without ASan.
# Leak checking (LEAKS=1) found real leaks and is clean on most runs, but
# LeakSanitizer's exit-time stop-the-world sometimes cannot suspend the shim's
# writer thread here ("Running thread N was not suspended. False leaks are
# possible.") and then reports its stack's vectors, or hangs: off by default.
export ASAN_OPTIONS=handle_segv=0:handle_abort=0:allow_user_segv_handler=1:detect_leaks=${LEAKS:-0}:halt_on_error=1:exitcode=86
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:exitcode=88:handle_segv=0:handle_abort=0:suppressions=$PWD/tests/sanitizers/tsan.supp
export LSAN_OPTIONS=exitcode=89:suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0

run() {  # dir, b_sanitize, runtime, whole|needed, default selection... [-- more selection...]
  local dir=$1 sanitize=$2 runtime=$3 build=$4
  shift 4
  # Uninstrumented programs that the tests run on the instrumented simulator
  # (nvcc output, Python) preload this first; the test runners read it.
  SANITIZER_PRELOAD=$(${CXX:-c++} -print-file-name="$runtime") && export SANITIZER_PRELOAD
  # -O1: ASan's usual level, a third less compile time than the default -O2
  # (the ASan build is the longest step of CI); -g stays for the reports.
  [ -f "$dir/build.ninja" ] || meson setup "$dir" -Db_sanitize="$sanitize" -Db_lundef=false -Dhip=enabled \
    -Doptimization=1
  if ((${#selection[@]})); then set -- "${selection[@]}"; fi
  if [ "$build" = needed ]; then
    # Only what the selected tests run (scripts/test_targets.py): the TSan
    # tree is not needed whole, and CI's time is counted.
    local words=() targets
    for word in "$@"; do [ "$word" = -- ] || words+=("$word"); done
    targets=$(scripts/test_targets.py "$dir" "${words[@]}")
    # shellcheck disable=SC2086  # one target per word
    ninja -C "$dir" $targets
  else
    meson compile -C "$dir"
  fi
  # meson intersects suites with test names: "--" separates selections run one after the other.
  local part=() status=0
  for word in "$@" --; do
    if [ "$word" = -- ]; then
      meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 3 "${part[@]}" ||
        status=1
      part=()
    else
      part+=("$word")
    fi
  done
  return $status
}

case "$kind" in
  # --no-suite timing: tests of measured against modelled GPU durations, which
  # do not hold at a sanitizer's speed (an 800 us copy modelled at 151 us was
  # seen under ASan with two tests running at once).
  address | all) run build-asan address,undefined libasan.so whole --no-suite timing ;;&
  thread | all)
    # e2e_cuda_gpu_accuracy (suite timing; threads on shared and own streams)
    # ran here until its program's race was fixed; its modelled durations do
    # not hold at TSan's speed.
    run build-tsan thread libtsan.so needed --suite preload --suite unit --suite launcher -- \
      e2e_cuda_threads_streams e2e_cuda_graph_capture e2e_nccl e2e_ring e2e_ctl
    ;;
  address) ;;
  *) echo "usage: scripts/sanitize.sh [address|thread|all] [meson test arguments...]" >&2; exit 2 ;;
esac
