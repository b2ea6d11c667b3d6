#!/usr/bin/env python3
"""Runs proflaunch's benchmarks and prints their figures as a Markdown table.

    meson compile -C build bench        (or: ninja -C build bench)

Each figure is a median over repetitions. Untraced and traced runs of the same
loop alternate, so a drift in machine speed hits both alike. The README's
Performance section quotes this script's output and says how it was made.

  a  added cost per kernel launch, GPU timing off: traced minus untraced,
     over the null driver (the shim alone) and over the simulated driver
  b  the same with --gpu-timing=events (simulated driver)
  c  sustained records/s with zero drops; drops under overload
  d  bytes per event in the file for the sample training loop
  e  proftrace convert: events/s and peak memory at two trace lengths
  f  added cost per traced allocation (cuMemAlloc_v2, and an alloc + free
     pair), memory domain on, over the null driver: traced minus untraced
  g  proftrace memory on a synthetic trace of 10 M allocation events: time
     and peak memory to build the timeline and write every output
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run(command, env=None, timeout=600):
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        sys.stderr.write(f"bench: {' '.join(command)} failed ({result.returncode}):\n{result.stderr}\n")
        raise SystemExit(1)
    return result


def launch_loop_ns(args, library_path, traced, timing, parts_dir):
    """Median ns per cuLaunchKernel in the launch loop, and whether the shim dropped anything."""
    env = dict(os.environ, LD_LIBRARY_PATH=library_path, SIMGPU_KERNEL_COSTS="*=0")
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING=timing)
    out = run([args.launch_loop, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"], env=env).stdout
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            return entry["real_time"] if entry["time_unit"] == "ns" else entry["real_time"] * 1000
    raise SystemExit("bench: no median in the launch loop's output")


def launch_overhead(args, library_path, timing, rounds=3):
    """Median over rounds of (traced - untraced), alternating the two."""
    deltas, untraced_all, traced_all = [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = launch_loop_ns(args, library_path, False, timing, parts)
            traced = launch_loop_ns(args, library_path, True, timing, parts)
        untraced_all.append(untraced)
        traced_all.append(traced)
        deltas.append(traced - untraced)
    return statistics.median(untraced_all), statistics.median(traced_all), statistics.median(deltas)


def alloc_loop_ns(args, traced, parts_dir):
    """Median ns per iteration of each allocation benchmark: {name: ns}."""
    env = dict(os.environ, LD_LIBRARY_PATH=args.null_driver_dir)
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING="none")
    out = run([args.alloc_loop, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"], env=env).stdout
    medians = {}
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            name = entry["run_name"].split("/")[0]
            medians[name] = entry["real_time"] if entry["time_unit"] == "ns" else entry["real_time"] * 1000
    return medians


def alloc_overhead(args, rounds=3):
    """Per benchmark: median untraced, traced and (traced - untraced) over alternating rounds."""
    samples = {}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = alloc_loop_ns(args, False, parts)
            traced = alloc_loop_ns(args, True, parts)
        for name in untraced:
            samples.setdefault(name, []).append((untraced[name], traced[name], traced[name] - untraced[name]))
    return {name: tuple(statistics.median(v[i] for v in values) for i in range(3)) for name, values in samples.items()}


def memory_run(args, events):
    """proftrace memory (HTML, JSON and the report) on N synthetic allocation events: seconds, peak RSS MiB."""
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "alloc.trace")
        run([args.synthetic_memory_trace, "-n", str(events), "-o", trace])
        start = time.monotonic()
        child = subprocess.Popen([args.proftrace, "memory", trace, "--report", "-o", os.path.join(work, "m.html"),
                                  "--json", os.path.join(work, "m.json")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            raise SystemExit(f"bench: proftrace memory failed: {child.stderr.read().decode()}")
        return wall, usage.ru_maxrss / 1024.0, os.path.getsize(trace)


def writer_throughput(args):
    rows = []
    out = run([args.writer_throughput] + [str(r) for r in args.rates]).stdout
    for line in out.splitlines():
        match = re.search(r"(\d+) records/s for 1 s:\s+(\d+) written,\s+(\d+) dropped", line)
        if match:
            rate, written, dropped = (int(g) for g in match.groups())
            rows.append({"rate": rate, "written": written, "dropped": dropped})
    return rows, out


def bytes_per_event(args, steps):
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "train.trace")
        env = dict(os.environ, LD_LIBRARY_PATH=args.sim_library_path)
        run([args.launcher, "-q", "-o", trace, "--", args.training_loop, "--steps", str(steps)], env=env)
        info = run([args.proftrace, "info", trace]).stdout
        events = sum(int(n) for n in re.findall(r"event records: (\d+)", info))
        return os.path.getsize(trace), events


def convert_run(args, events):
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "synthetic.trace")
        run([args.synthetic_trace, "-n", str(events), "-o", trace])
        start = time.monotonic()
        child = subprocess.Popen([args.proftrace, "convert", trace, "-o", os.path.join(work, "out.json")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            raise SystemExit(f"bench: proftrace convert failed: {child.stderr.read().decode()}")
        return events / wall, usage.ru_maxrss / 1024.0, os.path.getsize(trace)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("shim", "launcher", "proftrace", "launch_loop", "alloc_loop", "writer_throughput",
                 "synthetic_trace", "synthetic_memory_trace", "training_loop", "null_driver_dir", "sim_library_path"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--rates", type=int, nargs="*",
                        default=[2_000_000, 4_000_000, 6_000_000, 8_000_000, 10_000_000, 12_000_000])
    parser.add_argument("--convert-events", type=int, nargs=2, default=[1_000_000, 10_000_000])
    parser.add_argument("--memory-events", type=int, nargs="*", default=[1_000_000, 10_000_000])
    args = parser.parse_args()

    print(f"# proflaunch benchmarks ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f})\n")
    print("| # | what | figure |")
    print("|---|---|---|")

    u, t, d = launch_overhead(args, args.null_driver_dir, "none")
    print(f"| a | launch overhead, GPU timing off, null driver (shim alone) | +{d:.1f} ns per launch "
          f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")
    u, t, d = launch_overhead(args, args.sim_library_path, "none")
    print(f"| a | launch overhead, GPU timing off, simulated driver | +{d:.1f} ns per launch "
          f"(untraced {u:.0f} ns, traced {t:.0f} ns) |")
    u, t, d = launch_overhead(args, args.sim_library_path, "events")
    print(f"| b | launch overhead, GPU timing by events, simulated driver | +{d:.0f} ns per launch "
          f"(untraced {u:.0f} ns, traced {t:.0f} ns) |")

    rows, raw = writer_throughput(args)
    # The highest offered rate below which no rate dropped anything: one lucky
    # run above a failing rate does not count.
    best = 0
    for r in sorted(rows, key=lambda r: r["rate"]):
        if r["dropped"] != 0:
            break
        best = r["rate"]
    worst = max(rows, key=lambda r: r["rate"]) if rows else None
    print(f"| c | sustained records/s with zero drops (one producer thread, default buffer) | "
          f"{best / 1e6:.1f} M/s |")
    if worst:
        print(f"| c | under overload ({worst['rate'] / 1e6:.0f} M/s offered for 1 s) | "
              f"{int(worst.get('written', 0))} written, {int(worst.get('dropped', 0))} dropped, all counted |")

    size, events = bytes_per_event(args, 200)
    print(f"| d | bytes per event, sample training loop (200 steps, GPU timing on) | "
          f"{size / events:.2f} B ({events} events, {size} bytes) |")

    for n in args.convert_events:
        rate, rss, trace_bytes = convert_run(args, n)
        print(f"| e | proftrace convert, {n / 1e6:.0f} M events ({trace_bytes / 1e6:.0f} MB trace) | "
              f"{rate / 1e6:.2f} M events/s, peak RSS {rss:.0f} MiB |")

    costs = alloc_overhead(args)
    u, t, d = costs["BM_MemAlloc"]
    print(f"| f | added cost per traced allocation (cuMemAlloc_v2), no stacks, null driver | +{d:.1f} ns "
          f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")
    u, t, d = costs["BM_MemAllocFree"]
    print(f"| f | the same for an allocation + free pair, per call | +{d / 2:.1f} ns "
          f"(pair untraced {u:.1f} ns, traced {t:.1f} ns) |")

    for n in args.memory_events:
        wall, rss, trace_bytes = memory_run(args, n)
        print(f"| g | proftrace memory, {n / 1e6:.0f} M allocation events ({trace_bytes / 1e6:.0f} MB trace), two passes, "
              f"HTML + JSON + report | {wall:.1f} s ({n / wall / 1e6:.2f} M events/s), peak RSS {rss:.0f} MiB |")

    print("\nwriter throughput detail:\n")
    print(raw)


if __name__ == "__main__":
    main()
