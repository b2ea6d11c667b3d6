#!/usr/bin/env python3
"""Load time of our protobuf against our JSON in Perfetto's own importer.

    meson compile -C build bench-pftrace-load    (PROFLAUNCH_PFLOAD_EVENTS: event counts,
                                                  comma-separated; default 1000000)

For each count: a synthetic training-loop trace, converted by proftrace to
JSON and to protobuf (the default: packets deflated inside), each loaded
PROFLAUNCH_PFLOAD_RUNS times (default 3) by trace_processor_shell, the
importer behind ui.perfetto.dev. Printed per format: file size, the
shell's own "Trace loaded ... in X s", the shell's wall time and CPU time
(user + system, from wait4: on a shared machine the CPU time is the
steadier figure), medians, and protobuf / JSON. Then what each import
holds (slices, flows, tracks, threads, processes, args), so that a faster
load is seen to be the same trace.

Issue 40 item 10; docs/performance.md, figure t.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

FACTS_QUERY = """
select
  (select count(*) from slice) as slices,
  (select count(*) from flow) as flows,
  (select count(*) from track) as tracks,
  (select count(*) from thread) as threads,
  (select count(*) from process) as processes,
  (select count(*) from args) as args,
  (select sum(ts % 1000003 + dur % 1000003 + length(name)) from slice) as slice_checksum;
"""


def load(shell, trace, query_file):
    """One load: (seconds the shell reports, wall seconds, stdout)."""
    start = time.monotonic()
    child = subprocess.run([shell, "-q", query_file, trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = child.stdout, child.stderr
    wall = time.monotonic() - start
    if child.returncode != 0:
        raise SystemExit(f"pftrace-load: {shell} {trace} failed ({child.returncode}): {err.decode()[-2000:]}")
    found = re.search(r"Trace loaded: [0-9.]+ MB in ([0-9.]+)s", err.decode())
    if found is None:
        raise SystemExit(f"pftrace-load: no 'Trace loaded' line from {shell}: {err.decode()[-2000:]}")
    return float(found.group(1)), wall, out.decode()


def timed_loads(shell, trace, query_file, runs):
    reported, walls, cpus, out = [], [], [], ""
    for _ in range(runs):
        before = os.times()
        seconds, wall, out = load(shell, trace, query_file)  # the shell is the only child running
        after = os.times()
        reported.append(seconds)
        walls.append(wall)
        cpus.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    return statistics.median(reported), statistics.median(walls), statistics.median(cpus), out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proftrace", required=True)
    parser.add_argument("--synthetic-trace", required=True)
    parser.add_argument("--trace-processor", required=True, help="Perfetto's trace_processor_shell")
    args = parser.parse_args()
    counts = [int(n) for n in os.environ.get("PROFLAUNCH_PFLOAD_EVENTS", "1000000").split(",")]
    runs = int(os.environ.get("PROFLAUNCH_PFLOAD_RUNS", "3"))

    print(f"| events | format | size | loaded in (shell) | wall | CPU | medians of {runs} |")
    print("|---|---|---|---|---|---|---|")
    facts = []
    with tempfile.TemporaryDirectory(prefix="pftrace-load-") as work:
        query_file = os.path.join(work, "facts.sql")
        with open(query_file, "w") as f:
            f.write(FACTS_QUERY)
        for events in counts:
            trace = os.path.join(work, "t.trace")
            subprocess.run([args.synthetic_trace, "-n", str(events), "-o", trace], check=True,
                           stdout=subprocess.DEVNULL)
            results = {}
            for ending in ("json", "pftrace"):
                out = os.path.join(work, "t." + ending)
                subprocess.run([args.proftrace, "convert", trace, "-o", out, "--max-size", "0"], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                size = os.path.getsize(out) / 1e6
                reported, wall, cpu, held = timed_loads(args.trace_processor, out, query_file, runs)
                results[ending] = (reported, wall, cpu)
                facts.append((events, ending, held.strip().splitlines()[-1]))
                print(f"| {events / 1e6:g} M | {ending} | {size:.1f} MB | {reported:.2f} s | {wall:.2f} s | "
                      f"{cpu:.2f} s | |", flush=True)
                os.remove(out)
            os.remove(trace)
            p, j = results["pftrace"], results["json"]
            print(f"| {events / 1e6:g} M | pftrace / json | | {p[0] / j[0]:.2f} | {p[1] / j[1]:.2f} | "
                  f"{p[2] / j[2]:.2f} | |", flush=True)
    print()
    print("What each import holds (slices, flows, tracks, threads, processes, args, slice checksum):")
    for events, ending, held in facts:
        print(f"  {events / 1e6:g} M {ending}: {held}")


if __name__ == "__main__":
    sys.exit(main())
