#!/usr/bin/env bash
# Soak: the bundled training loop under proflaunch for a given time, on the
# simulated GPU stack, sampled as it runs; then the trace is converted.
#
#   scripts/soak.sh [SECONDS=60] [OUT_DIR=out/soak]
#
# Writes OUT_DIR/samples.csv (seconds, program RSS, program peak RSS, writer
# thread CPU seconds, bytes on disk in the parts) and OUT_DIR/summary.txt:
# RSS at the start and end of the run, file growth per minute and how
# straight a line it is, events and drops, and the conversion's time and
# peak RSS. Exits 1 when the run or the conversion fails or when events
# were dropped; RSS and growth are reported, not judged (they are for the
# figures in docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
out=${2:-out/soak}
case "$seconds" in '' | *[!0-9]*) echo "usage: scripts/soak.sh [SECONDS] [OUT_DIR]" >&2; exit 64 ;; esac

b=build
# The soak runs what the sample runs: build those (up to date: nothing to do).
scripts/build.sh --target sample >/dev/null
program=$b/tests/simgpu/programs/training_loop
export LD_LIBRARY_PATH="$b/tests/simgpu/driver:$b/tests/simgpu/runtime:$b/tests/simgpu/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# How many steps fill SECONDS: 1000 steps untraced, timed by the program;
# its peak RSS is the baseline the traced run is compared with.
read -r wall untraced_kib < <(python3 - "$program" <<'PY'
import re, resource, subprocess, sys
run = subprocess.run([sys.argv[1], "--steps", "1000"], capture_output=True, text=True, check=True)
wall = float(re.search(r"wall ([0-9.]+) s", run.stderr).group(1))
print(wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
steps=$(python3 -c "print(max(200, int($seconds / ($wall / 1000))))")

rm -rf "$out"
mkdir -p "$out"
trace=$out/soak.trace
echo "soak: $steps steps (about $seconds s), sampled every 2 s, into $out"
"$b/launcher/proflaunch" -o "$trace" -- "$program" --steps "$steps" >"$out/program.out" 2>"$out/launcher.err" &
launcher=$!

# The program is the launcher's only child.
child=""
for _ in $(seq 100); do
  child=$(cat "/proc/$launcher/task/$launcher/children" 2>/dev/null | awk '{print $1}')
  [ -n "$child" ] && break
  sleep 0.05
done
echo "seconds,rss_kib,peak_rss_kib,writer_cpu_s,parts_bytes" >"$out/samples.csv"
start=$(date +%s.%N)
ticks=$(getconf CLK_TCK)
while kill -0 "$launcher" 2>/dev/null; do
  if [ -n "$child" ] && [ -r "/proc/$child/status" ]; then
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
    writer_cpu=0
    for task in /proc/"$child"/task/*; do
      if [ "$(cat "$task/comm" 2>/dev/null)" = proflaunch-wr ]; then
        # utime and stime: fields 14 and 15, after the ")" that ends comm.
        writer_cpu=$(sed 's/.*) //' "$task/stat" 2>/dev/null | awk -v t="$ticks" '{printf "%.2f", ($12 + $13) / t}')
      fi
    done
    bytes=$(du -sb "$trace.parts" 2>/dev/null | awk '{print $1}')
    now=$(date +%s.%N)
    [ -n "$rss" ] && echo "$(python3 -c "print(round($now - $start, 1))"),$rss,$hwm,$writer_cpu,${bytes:-0}" >>"$out/samples.csv"
  fi
  sleep 2
done
status=0
wait "$launcher" || status=$?
if [ "$status" -ne 0 ]; then
  echo "soak: the traced run failed (exit $status):" >&2
  tail -5 "$out/launcher.err" >&2
  exit 1
fi

info=$("$b/tools/proftrace" info "$trace")
python3 - "$out" "$trace" "$b/tools/proftrace" "$info" "$untraced_kib" "$steps" <<'EOF'
import csv, os, resource, subprocess, sys, time

out, trace, proftrace, info = sys.argv[1:5]
untraced_kib, steps = int(sys.argv[5]), int(sys.argv[6])
rows = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(open(os.path.join(out, "samples.csv")))]
lines = []
def say(text):
    lines.append(text)
    print("soak: " + text)

say(f"{steps} training steps; untraced, 1000 steps peak at {untraced_kib / 1024:.1f} MiB RSS")
if len(rows) >= 4:
    quarter = max(1, len(rows) // 4)
    first = sorted(r["rss_kib"] for r in rows[:quarter])[quarter // 2]
    last = sorted(r["rss_kib"] for r in rows[-quarter:])[quarter // 2]
    say(f"program RSS: {first / 1024:.1f} MiB in the first quarter, {last / 1024:.1f} MiB in the last "
        f"({(last - first) / 1024:+.1f} MiB), peak {max(r['peak_rss_kib'] for r in rows) / 1024:.1f} MiB")
    xs = [r["seconds"] for r in rows]
    ys = [r["parts_bytes"] for r in rows]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx if sxx else 0.0
    r2 = (sxy * sxy) / (sxx * syy) if sxx and syy else 0.0
    say(f"file growth: {slope * 60 / 1048576:.2f} MiB per minute, R^2 of a straight line {r2:.4f} "
        f"over {n} samples")
    say(f"writer thread CPU: {rows[-1]['writer_cpu_s']:.2f} s in {rows[-1]['seconds']:.0f} s of run")
else:
    say(f"only {len(rows)} samples: run longer for RSS and growth figures")

events = dropped = None
for line in info.splitlines():
    if "records written" in line and "dropped" in line:
        words = line.replace(",", "").split()
        events = (events or 0) + int(words[words.index("records") - 1])
        dropped = (dropped or 0) + int(words[words.index("dropped") - 1])
say(f"events {events}, dropped {dropped}, trace {os.path.getsize(trace) / 1048576:.1f} MiB")

before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
begin = time.monotonic()
converted = subprocess.run([proftrace, "convert", trace, "-o", os.path.join(out, "soak.pftrace")],
                           capture_output=True, text=True)
elapsed = time.monotonic() - begin
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
say(f"convert to protobuf: {elapsed:.1f} s, peak RSS {max(peak, before) / 1024:.0f} MiB, exit {converted.returncode}")
open(os.path.join(out, "summary.txt"), "w").write("\n".join(lines) + "\n")
if converted.returncode != 0:
    print(converted.stderr, file=sys.stderr)
    sys.exit(1)
if events is None or dropped:
    print("soak: events were dropped (or none were recorded)", file=sys.stderr)
    sys.exit(1)
EOF
