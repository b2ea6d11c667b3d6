#!/usr/bin/env bash
# Time-bounded fuzzing with libFuzzer under ASan and UBSan: the trace reader
# (formats/fuzz), the proftrace commands on traces mutated record by record
# (tools/fuzz), and the settings parsers: PROFLAUNCH_*, capture options, -o
# patterns (launcher/fuzz). scripts/test.sh runs it after the tests (CI:
# about a minute in all).
#
#   scripts/fuzz.sh [SECONDS]   # per fuzzer; default 20
#
# Builds only the fuzzers, in build-fuzz (clang, -Dfuzzing=true,
# b_sanitize=address,undefined). Each starts from its checked-in corpus and
# regressions and grows a scratch corpus under build-fuzz/fuzz-corpus. A
# crash, sanitizer report, hang or broken invariant stops it: the input is
# left in build-fuzz/fuzz-artifacts/, and the script fails naming it. Keep it
# as a regression: copy it into formats/fuzz/regressions/,
# tools/fuzz/regressions/ or launcher/fuzz/regressions/, where the normal
# build's runners replay it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
dir=build-fuzz

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is missing (scripts/install-deps.sh installs clang)" >&2
  exit 1
fi
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$dir" -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dhip=disabled >/dev/null
fi
# Quiet unless it fails: then the end of the build's output says why (a
# construct clang refuses and gcc takes, say).
if ! ninja -C "$dir" formats/fuzz/reader_fuzzer formats/fuzz/make_seed_corpus tools/fuzz/commands_fuzzer \
    launcher/fuzz/settings_fuzzer >"$dir/fuzz-build.log" 2>&1; then
  grep -E -A8 "error|FAILED" "$dir/fuzz-build.log" | head -n 60 >&2
  echo "fuzz: building the fuzzers failed; the build's output is in $dir/fuzz-build.log" >&2
  exit 1
fi

artifacts="$dir/fuzz-artifacts"
mkdir -p "$artifacts" "$dir/fuzz-corpus/reader" "$dir/fuzz-corpus/commands" "$dir/fuzz-corpus/settings"
"$dir/formats/fuzz/make_seed_corpus" "$dir/fuzz-corpus/reader-seeds"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
status=0
run() {
  local name=$1
  shift
  echo "fuzz: $name for ${seconds}s"
  # -entropic=0: the entropic scheduler's bookkeeping took 40 % of the time
  # on these large inputs.
  if ! "$@" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -entropic=0 \
      -artifact_prefix="$artifacts/$name-" -print_final_stats=1 >"$dir/fuzz-$name.log" 2>&1; then
    echo "fuzz: $name FAILED; see $dir/fuzz-$name.log; inputs:" >&2
    ls "$artifacts"/"$name"-* >&2 || true
    tail -40 "$dir/fuzz-$name.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$dir/fuzz-$name.log" | sed "s/^/fuzz: $name: /"
  fi
}
run reader "$dir/formats/fuzz/reader_fuzzer" "$dir/fuzz-corpus/reader" "$dir/fuzz-corpus/reader-seeds" \
  formats/fuzz/regressions
run commands "$dir/tools/fuzz/commands_fuzzer" "$dir/fuzz-corpus/commands" tools/fuzz/corpus tools/fuzz/regressions
run settings "$dir/launcher/fuzz/settings_fuzzer" "$dir/fuzz-corpus/settings" launcher/fuzz/corpus \
  launcher/fuzz/regressions
exit $status
