#!/usr/bin/env bash
# Convert throughput and peak memory of `proftrace convert` on synthetic
# traces of growing length: events/s should stay flat and peak RSS should not
# grow with the trace (conversion streams).
#
#   bench/convert_bench.sh SYNTHETIC_TRACE_EXE PROFTRACE_EXE [EVENTS...]
#   bench/convert_bench.sh build/tools/proflaunch-synthetic-trace build/tools/proftrace 1000000 10000000
#
# Output goes to /dev/null by default so the figure is the converter's, not
# the disk's; set CONVERT_BENCH_OUTPUT=file to write a real file next to the
# trace (and measure the disk too).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SYNTHETIC_TRACE_EXE PROFTRACE_EXE [EVENTS...]" >&2
  exit 2
fi
synthetic=$1
proftrace=$2
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 10000000)
[ -x /usr/bin/time ] || { echo "$0: needs GNU time at /usr/bin/time" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%12s %12s %10s %14s %12s %12s\n' events trace_MB seconds events_per_s peak_RSS_MB json_MB
for n in "${sizes[@]}"; do
  "$synthetic" -n "$n" -o "$work/t.trace" --processes 4 --threads 4 2>/dev/null
  out=/dev/null
  [ "${CONVERT_BENCH_OUTPUT:-null}" = file ] && out="$work/t.json"
  /usr/bin/time -f '%e %M' -o "$work/time" "$proftrace" convert -q "$work/t.trace" -o "$out"
  read -r seconds rss_kb < "$work/time"
  json_mb=0
  [ "$out" != /dev/null ] && json_mb=$(( $(stat -c %s "$out") / 1048576 ))
  awk -v n="$n" -v s="$seconds" -v kb="$rss_kb" -v tb="$(stat -c %s "$work/t.trace")" -v j="$json_mb" \
    'BEGIN { printf "%12d %12.1f %10.2f %14.0f %12.1f %12d\n", n, tb / 1048576, s, (s > 0 ? n / s : 0), kb / 1024, j }'
  rm -f "$work/t.json"
done
