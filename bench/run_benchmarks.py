#!/usr/bin/env python3
"""Runs proflaunch's benchmarks and prints their figures as a Markdown table.

    meson compile -C build bench        (or: ninja -C build bench)

Each figure is a median over repetitions. Untraced and traced runs of the same
loop alternate, so a drift in machine speed hits both alike. docs/performance.md
quotes this script's output and says how it was made.

  a  added cost per kernel launch, GPU timing off, call stacks off: traced
     minus untraced, over the null driver (the shim alone) and over the
     simulated driver; and the same with call stacks on (the default)
  b  the same with --gpu-timing=none, events and cupti in turn (simulated driver),
     and the rate at which the CUPTI backend parses activity records
  c  sustained records/s with zero drops; drops under overload
  d  bytes per event in the file for the sample training loop
  e  proftrace convert: events/s and peak memory at two trace lengths
  f  a native call stack (attach_stacks: the stack, its id, the record) at
     8 to 64 frames deep, cut at the default depth of 32: a repeated stack
     (a stored walk, checked), two call sites alternating at one stack
     position, a stack at a position not seen recently (walked); the shim's
     walker alone and libunwind's unw_backtrace alone
  g  a Python call stack (20-frame Python call chain), with the GIL released
     (ctypes.CDLL) and held (ctypes.PyDLL), under each CPython found (3.9 to
     3.13, Debian's python3)
  h  added cost per intercepted NCCL call (ncclAllReduce; a grouped send and
     receive), over a null libnccl.so.2 with GPU timing off (the shim alone)
  i  added cost per traced allocation (cuMemAlloc_v2, and an alloc + free
     pair), memory domain on, call stacks off, over the null driver: traced
     minus untraced; and the same with call stacks on (the default)
  j  proftrace memory on a synthetic trace of 10 M allocation events: time
     and peak memory to build the timeline and write every output
  k  added cost per counted call (cuCtxGetCurrent: the shim counts it per
     thread instead of recording it), over the null driver
  l  added cost per cuGraphLaunch, GPU timing off, over the null driver, with
     call stacks off and on
  m  added cost per hipLaunchKernel (AMD), GPU timing off, call stacks off,
     over a null libamdhip64.so.5 (the shim alone): next to figure a
  n  added cost per NVTX range (push + pop): the shim as NVTX's tool against
     NVTX without a tool
  o  outside a capture window (recording off): the added cost of a launch
     (null driver) and of an NVTX range while the shim watches for
     another one, against untraced
  p  the flight recorder (--ring=200ms --ring-size=4M) against streaming
     mode, both traced, per launch over the null driver; and the most
     compressed data the ring held (its bound is never passed)
  w  a blocking call that does not block, under the OS runtime hooks
     (--osrt-threshold at its default): an uncontended pthread_mutex_lock +
     unlock pair and poll(timeout 0), traced minus untraced; the same with
     --osrt-threshold=off and outside a capture window; and, in one traced
     process, hooked against libc's own definition
  q  proftrace convert to Perfetto protobuf (.pftrace) at the two trace
     lengths of e, packets deflated (the default), zstd-compressed and
     plain: events/s, bytes per event in the file, peak memory

PROFLAUNCH_BENCH_FIGURES=ci meson compile -C build bench runs only figures c
and i (any letters; default all).
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


def launch_loop_ns(args, library_path, traced, timing, parts_dir, stacks="none", benchmark="BM_LaunchKernel",
                   stderr_out=None, extra_env=None):
    """Median ns per call of `benchmark` in the launch loop (BM_LaunchKernel: cuLaunchKernel).
    With `stderr_out` (a list), the shim runs verbose and its stderr is appended there."""
    env = dict(os.environ, LD_LIBRARY_PATH=library_path, SIMGPU_KERNEL_COSTS="*=0")
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING=timing,
                   PROFLAUNCH_STACKS=stacks)
        if stderr_out is not None:
            env["PROFLAUNCH_VERBOSE"] = "1"
        env.update(extra_env or {})
    result = run([args.launch_loop, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
                  "--benchmark_report_aggregates_only=true", f"--benchmark_filter=^{benchmark}/"], env=env)
    if stderr_out is not None:
        stderr_out.append(result.stderr)
    for entry in json.loads(result.stdout)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            return entry["real_time"] if entry["time_unit"] == "ns" else entry["real_time"] * 1000
    raise SystemExit("bench: no median in the launch loop's output")


def timing_backends_overhead(args, rounds=3):
    """Figure b: per-launch cost of each GPU timing backend over the simulated
    driver, untraced and traced with none, events and cupti in turn, in each
    round. Returns ({backend: (median traced ns, median delta ns)}, median
    untraced ns, CUPTI parse rates in M records/s)."""
    backends = ("none", "events", "cupti")
    untraced_all, traced_all, deltas = [], {b: [] for b in backends}, {b: [] for b in backends}
    parse_rates = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = launch_loop_ns(args, args.sim_library_path, False, "none", parts)
            untraced_all.append(untraced)
            for backend in backends:
                stderr = [] if backend == "cupti" else None
                traced = launch_loop_ns(args, args.sim_library_path, True, backend, parts, stderr_out=stderr)
                traced_all[backend].append(traced)
                deltas[backend].append(traced - untraced)
                if stderr:
                    found = re.search(r"CUPTI: (\d+) activity records parsed in ([0-9.]+) ms", stderr[0])
                    if found is None:
                        raise SystemExit("bench: the CUPTI backend did not run (no parse line):\n" + stderr[0])
                    parse_rates.append(int(found.group(1)) / float(found.group(2)) / 1e3)
    figures = {b: (statistics.median(traced_all[b]), statistics.median(deltas[b])) for b in backends}
    return figures, statistics.median(untraced_all), parse_rates


def launch_overhead(args, library_path, timing, rounds=3, stacks="none", benchmark="BM_LaunchKernel"):
    """Median over rounds of (traced - untraced), alternating the two."""
    deltas, untraced_all, traced_all = [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = launch_loop_ns(args, library_path, False, timing, parts, benchmark=benchmark)
            traced = launch_loop_ns(args, library_path, True, timing, parts, stacks, benchmark=benchmark)
        untraced_all.append(untraced)
        traced_all.append(traced)
        deltas.append(traced - untraced)
    return statistics.median(untraced_all), statistics.median(traced_all), statistics.median(deltas)


def alloc_loop_ns(args, traced, parts_dir, stacks="none"):
    """Median ns per iteration of each allocation benchmark: {name: ns}."""
    env = dict(os.environ, LD_LIBRARY_PATH=args.null_driver_dir)
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING="none",
                   PROFLAUNCH_STACKS=stacks)
    out = run([args.alloc_loop, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"], env=env).stdout
    medians = {}
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            name = entry["run_name"].split("/")[0]
            medians[name] = entry["real_time"] if entry["time_unit"] == "ns" else entry["real_time"] * 1000
    return medians


def alloc_overhead(args, rounds=3, stacks="none"):
    """Per benchmark: median untraced, traced and (traced - untraced) over alternating rounds."""
    samples = {}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = alloc_loop_ns(args, False, parts)
            traced = alloc_loop_ns(args, True, parts, stacks)
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


def convert_run(args, events, output="out.json", extra=()):
    """Input events/s, peak RSS (MiB), trace bytes, output bytes and timeline events written."""
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "synthetic.trace")
        run([args.synthetic_trace, "-n", str(events), "-o", trace])
        out = os.path.join(work, output)
        # The previous run's output (1.2 GB for 10 M events as plain
        # protobuf) is still being written back: let it finish first, so
        # that it does not slow this run.
        os.sync()
        start = time.monotonic()
        child = subprocess.Popen([args.proftrace, "convert", trace, "-o", out, "--max-size", "0", *extra],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        summary = child.stderr.read().decode()
        if status != 0:
            raise SystemExit(f"bench: proftrace convert failed: {summary}")
        written = re.search(r"wrote .*?: (\d+) events", summary)
        return (events / wall, usage.ru_maxrss / 1024.0, os.path.getsize(trace), os.path.getsize(out),
                int(written.group(1)) if written else 0)


def stack_capture(args):
    """Median real and CPU ns per call of bench_stack_capture's benchmarks, with frames captured."""
    out = run([args.stack_capture, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"]).stdout
    rows = []
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            rows.append((entry["run_name"], entry["real_time"], entry["cpu_time"], int(entry.get("frames", 0))))
    return rows


def python_stacks(args, python3):
    out = run([python3, args.python_stack_bench, args.python_stacks_lib]).stdout
    return json.loads(out)


def benchmark_median_ns(binary, env, repetitions):
    """Median ns per iteration of the one benchmark in `binary` (Google Benchmark JSON)."""
    out = run([binary, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
               "--benchmark_report_aggregates_only=true"], env=env).stdout
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            return entry["real_time"] if entry["time_unit"] == "ns" else entry["real_time"] * 1000
    raise SystemExit(f"bench: no median in {binary}'s output")


def alternating_overhead(measure, rounds=3):
    """Median over rounds of (traced - untraced), alternating the two;
    `measure(traced, parts_dir)` returns ns per iteration."""
    untraced_all, traced_all, deltas = [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = measure(False, parts)
            traced = measure(True, parts)
        untraced_all.append(untraced)
        traced_all.append(traced)
        deltas.append(traced - untraced)
    return statistics.median(untraced_all), statistics.median(traced_all), statistics.median(deltas)


def hip_launch_ns(args, traced, parts_dir):
    """Figure m: ns per hipLaunchKernel over the null libamdhip64."""
    env = dict(os.environ, LD_LIBRARY_PATH=args.null_hip_dir)
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING="none",
                   PROFLAUNCH_STACKS="none")
    return benchmark_median_ns(args.hip_launch_loop, env, args.repetitions)


def nvtx_range_ns(args, traced, parts_dir):
    """Figure n: ns per NVTX range (push + pop), without a tool or with the shim as the tool."""
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    if traced:
        env.update(LD_PRELOAD=args.shim, NVTX_INJECTION64_PATH=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir,
                   PROFLAUNCH_GPU_TIMING="none", PROFLAUNCH_STACKS="none")
    return benchmark_median_ns(args.nvtx_loop, env, args.repetitions)


def paused_launch_ns(args, traced, parts_dir):
    """Figure o: ns per cuLaunchKernel over the null driver outside a capture
    window (--capture-range=cudaProfilerApi and no cudaProfilerStart)."""
    return launch_loop_ns(args, args.null_driver_dir, traced, "none", parts_dir,
                          extra_env={"PROFLAUNCH_CAPTURE_RANGE": "cudaProfilerApi"})


def paused_nvtx_range_ns(args, traced, parts_dir):
    """Figure o: ns per NVTX range outside a capture window while the shim
    watches for another range (--capture-range=nvtx:never)."""
    env = dict(os.environ)
    env.pop("NVTX_INJECTION64_PATH", None)
    if traced:
        env.update(LD_PRELOAD=args.shim, NVTX_INJECTION64_PATH=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir,
                   PROFLAUNCH_GPU_TIMING="none", PROFLAUNCH_STACKS="none", PROFLAUNCH_CAPTURE_RANGE="nvtx:never")
    return benchmark_median_ns(args.nvtx_loop, env, args.repetitions)


def osrt_call_ns(args, benchmark, traced, parts_dir, extra_env=None):
    """Figure w: CPU ns per iteration of one benchmark of bench_osrt_call_loop
    (CPU time, not wall time: a few ns are measured on a shared machine)."""
    env = dict(os.environ)
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING="none")
        env.update(extra_env or {})
    out = run([args.osrt_call_loop, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true", f"--benchmark_filter=^{benchmark}$"], env=env).stdout
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            return entry["cpu_time"] if entry["time_unit"] == "ns" else entry["cpu_time"] * 1000
    raise SystemExit(f"bench: no median for {benchmark}")


def ring_overhead(args, rounds=3):
    """Figure p: the flight recorder's cost per launch against streaming mode
    (both traced, alternating), and the most it kept under a 4 MiB bound."""
    streaming_all, ring_all, deltas, verbose = [], [], [], []
    ring_env = {"PROFLAUNCH_RING": "200ms", "PROFLAUNCH_RING_SIZE": "4M"}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            streaming = launch_loop_ns(args, args.null_driver_dir, True, "none", parts)
        with tempfile.TemporaryDirectory() as parts:
            ring = launch_loop_ns(args, args.null_driver_dir, True, "none", parts, stderr_out=verbose,
                                  extra_env=ring_env)
        streaming_all.append(streaming)
        ring_all.append(ring)
        deltas.append(ring - streaming)
    peaks, dropped = [], []
    for text in verbose:
        for m in re.finditer(r"peak (\d+) KiB kept of (\d+) KiB, (\d+) records let go", text):
            peaks.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
        for m in re.finditer(r"(\d+) records written, (\d+) dropped", text):
            dropped.append(int(m.group(2)))
    return (statistics.median(streaming_all), statistics.median(ring_all), statistics.median(deltas), peaks,
            dropped)


def nccl_call_ns(args, traced, parts_dir):
    """Median ns per call of each NCCL benchmark, over the null libnccl.so.2."""
    env = dict(os.environ, LD_LIBRARY_PATH=args.null_nccl_dir)
    if traced:
        env.update(LD_PRELOAD=args.shim, PROFLAUNCH_PARTS_DIR=parts_dir, PROFLAUNCH_GPU_TIMING="none")
    out = run([args.nccl_call_loop, "--benchmark_format=json", f"--benchmark_repetitions={args.repetitions}",
               "--benchmark_report_aggregates_only=true"], env=env).stdout
    medians = {}
    for entry in json.loads(out)["benchmarks"]:
        if entry.get("aggregate_name") == "median":
            scale = 1 if entry["time_unit"] == "ns" else 1000
            medians[entry["run_name"].split("/")[0]] = entry["real_time"] * scale
    return medians


def nccl_overhead(args, rounds=3):
    """Per benchmark: median over rounds of (traced - untraced), and the medians."""
    result = {}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as parts:
            untraced = nccl_call_ns(args, False, parts)
            traced = nccl_call_ns(args, True, parts)
        for name in untraced:
            result.setdefault(name, []).append((untraced[name], traced[name]))
    return {name: (statistics.median(u for u, _ in pairs), statistics.median(t for _, t in pairs),
                   statistics.median(t - u for u, t in pairs)) for name, pairs in result.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("shim", "launcher", "proftrace", "launch_loop", "alloc_loop", "writer_throughput",
                 "synthetic_trace", "synthetic_memory_trace", "training_loop", "null_driver_dir",
                 "sim_library_path", "stack_capture", "python_stacks_lib", "python_stack_bench",
                 "nccl_call_loop", "null_nccl_dir", "hip_launch_loop", "null_hip_dir", "nvtx_loop",
                 "osrt_call_loop"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    parser.add_argument("--python3", nargs="*", default=[], help="the interpreters of figure g")
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--rates", type=int, nargs="*",
                        default=[2_000_000, 4_000_000, 6_000_000, 8_000_000, 10_000_000, 12_000_000])
    parser.add_argument("--convert-events", type=int, nargs=2, default=[1_000_000, 10_000_000])
    parser.add_argument("--memory-events", type=int, nargs="*", default=[1_000_000, 10_000_000])
    args = parser.parse_args()
    # PROFLAUNCH_BENCH_FIGURES=ci (for example) runs figures c and i only.
    figures = os.environ.get("PROFLAUNCH_BENCH_FIGURES", "abcdefghijklmnopqw")

    print(f"# proflaunch benchmarks ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f})\n")
    print("| # | what | figure |")
    print("|---|---|---|")

    if "a" in figures:
        u, t, d = launch_overhead(args, args.null_driver_dir, "none")
        print(f"| a | launch overhead, GPU timing off, null driver (shim alone) | +{d:.1f} ns per launch "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")
        u, t, d = launch_overhead(args, args.sim_library_path, "none")
        print(f"| a | launch overhead, GPU timing off, simulated driver | +{d:.1f} ns per launch "
              f"(untraced {u:.0f} ns, traced {t:.0f} ns) |")
        u, t, d = launch_overhead(args, args.null_driver_dir, "none", stacks="all")
        print(f"| a | launch overhead with call stacks (the default --stacks=all), null driver | +{d:.1f} ns per launch "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "m" in figures:
        u, t, d = alternating_overhead(lambda traced, parts: hip_launch_ns(args, traced, parts))
        print(f"| m | hipLaunchKernel overhead, GPU timing off, stacks off, null libamdhip64 (shim alone) | "
              f"+{d:.1f} ns per launch (untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "n" in figures:
        u, t, d = alternating_overhead(lambda traced, parts: nvtx_range_ns(args, traced, parts))
        print(f"| n | an NVTX range (nvtxRangePushA + nvtxRangePop) recorded by the shim, stacks off | "
              f"+{d:.1f} ns per range (untraced {u:.1f} ns: no NVTX tool; traced {t:.1f} ns) |")

    if "o" in figures:
        u, t, d = alternating_overhead(lambda traced, parts: paused_launch_ns(args, traced, parts))
        print(f"| o | launch overhead outside a capture window (recording off), null driver | "
              f"+{d:.1f} ns per launch (untraced {u:.1f} ns, traced {t:.1f} ns) |")
        u, t, d = alternating_overhead(lambda traced, parts: paused_nvtx_range_ns(args, traced, parts))
        print(f"| o | an NVTX range outside a capture window, the shim watching for --capture-range=nvtx:NAME | "
              f"+{d:.1f} ns per range (untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "p" in figures:
        s_ns, r_ns, d, peaks, dropped = ring_overhead(args)
        print(f"| p | flight recorder (--ring=200ms --ring-size=4M) against streaming, per launch, null driver | "
              f"{d:+.1f} ns per launch (streaming {s_ns:.1f} ns, ring {r_ns:.1f} ns) |")
        if peaks:
            peak = max(p[0] for p in peaks)
            bound = peaks[0][1]
            let_go = max(p[2] for p in peaks)
            print(f"| p | most compressed data the ring kept, bound {bound} KiB | {peak} KiB "
                  f"(up to {let_go} records let go per run, {sum(dropped)} dropped) |")

    if "w" in figures:
        cases = (("BM_MutexLockUnlock", "uncontended pthread_mutex_lock + unlock"), ("BM_PollZero", "poll, timeout 0"))
        settings = (({}, "recording, --osrt-threshold=20us (the default)"),
                    ({"PROFLAUNCH_OSRT_THRESHOLD": "off"}, "--osrt-threshold=off"),
                    ({"PROFLAUNCH_CAPTURE_RANGE": "cudaProfilerApi"}, "outside a capture window"))
        for benchmark, what in cases:
            for extra, setting in settings:
                u, t, d = alternating_overhead(
                    lambda traced, parts: osrt_call_ns(args, benchmark, traced, parts, extra))
                print(f"| w | {what}, {setting} | +{d:.1f} ns per call (untraced {u:.1f} ns, traced {t:.1f} ns) |")
            with tempfile.TemporaryDirectory() as parts:
                hooked = osrt_call_ns(args, benchmark, True, parts)
                libc = osrt_call_ns(args, benchmark + "Libc", True, parts)
            print(f"| w | {what}, one traced process: hooked against libc's own | +{hooked - libc:.1f} ns "
                  f"(hooked {hooked:.1f} ns, libc {libc:.1f} ns) |")

    if "k" in figures:
        u, t, d = launch_overhead(args, args.null_driver_dir, "none", benchmark="BM_CountedCall")
        print(f"| k | a counted call (cuCtxGetCurrent: counted, not recorded), null driver | +{d:.1f} ns per call "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "l" in figures:
        for stacks, what in (("none", "stacks off"), ("all", "stacks on (the default)")):
            u, t, d = launch_overhead(args, args.null_driver_dir, "none", stacks=stacks, benchmark="BM_GraphLaunch")
            print(f"| l | cuGraphLaunch overhead, GPU timing off, {what}, null driver | +{d:.1f} ns per launch "
                  f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "b" in figures:
        backends, u, rates = timing_backends_overhead(args)
        none = backends["none"][1]
        for backend in ("none", "events", "cupti"):
            t, d = backends[backend]
            extra = "" if backend == "none" else f"; {d - none:+.0f} ns over GPU timing off"
            print(f"| b | launch overhead, GPU timing {backend}, simulated driver | +{d:.0f} ns per launch "
                  f"(untraced {u:.0f} ns, traced {t:.0f} ns{extra}) |")
        events_cost, cupti_cost = backends["events"][1] - none, backends["cupti"][1] - none
        if events_cost > 0:
            print(f"| b | CUPTI's added cost over events' (target <= 1/4) | {cupti_cost / events_cost:.2f} |")
        print(f"| b | CUPTI activity records parsed by the backend (writer thread) | "
              f"{statistics.median(rates):.1f} M records/s (runs: {', '.join(f'{r:.1f}' for r in rates)}) |")

    if "h" in figures:
        nccl = nccl_overhead(args)
        u, t, d = nccl["BM_AllReduce"]
        print(f"| h | NCCL collective overhead, null libnccl (shim alone) | +{d:.1f} ns per ncclAllReduce "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")
        u, t, d = nccl["BM_GroupedSendRecv"]
        print(f"| h | NCCL group of a send and a receive, null libnccl | +{d:.1f} ns per group of 4 calls "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "c" in figures:
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

    if "d" in figures:
        size, events = bytes_per_event(args, 200)
        print(f"| d | bytes per event, sample training loop (200 steps, GPU timing on) | "
              f"{size / events:.2f} B ({events} events, {size} bytes) |")

    if "e" in figures:
        for n in args.convert_events:
            rate, rss, trace_bytes, _, _ = convert_run(args, n)
            print(f"| e | proftrace convert, {n / 1e6:.0f} M events ({trace_bytes / 1e6:.0f} MB trace) | "
                  f"{rate / 1e6:.2f} M events/s, peak RSS {rss:.0f} MiB |")

    if "q" in figures:
        # The packets deflated (the default), zstd-compressed, and plain; the
        # median of three runs each, deflate and zstd alternating. The plain
        # runs come after them: each writes and deletes 1.2 GB at 10 M events,
        # which slowed the run after it by up to a quarter.
        for n in args.convert_events:
            runs = {}
            for _ in range(3):
                for compression in ("deflate", "zstd"):
                    runs.setdefault(compression, []).append(
                        convert_run(args, n, "out.pftrace", ("--compression", compression)))
            for _ in range(3):
                runs.setdefault("none", []).append(convert_run(args, n, "out.pftrace", ("--compression", "none")))
            for compression, results in runs.items():
                rate = statistics.median(r[0] for r in results)
                rss = max(r[1] for r in results)
                trace_bytes, out_bytes, written = results[0][2], results[0][3], results[0][4]
                print(f"| q | proftrace convert to protobuf ({compression}), {n / 1e6:.0f} M events "
                      f"({trace_bytes / 1e6:.0f} MB trace) | {rate / 1e6:.2f} M events/s (median of 3), "
                      f"{out_bytes / max(written, 1):.1f} bytes per event ({out_bytes / 1e6:.0f} MB, "
                      f"{written} events), peak RSS {rss:.0f} MiB |")

    if "f" in figures:
        labels = {
            "BM_AttachStacks": "attach_stacks, repeated stack",
            "BM_AttachStacksTwoSites": "attach_stacks, two call sites alternating at one position",
            "BM_AttachStacksUnseenPosition": "attach_stacks, stack at a position not seen recently (walked)",
            "BM_WalkerOnly": "the shim's walker alone",
            "BM_UnwBacktraceOnly": "unw_backtrace alone",
        }
        for name, real, cpu, frames in stack_capture(args):
            base, deep = name.rsplit("/", 1)
            what = labels.get(base, base)
            print(f"| f | native stack, {what}, {deep}-frame call chain ({frames} frames kept) | "
                  f"{real:.0f} ns ({cpu:.0f} ns CPU) |")

    if "g" in figures:
        for python3 in args.python3:
            python = python_stacks(args, python3)
            for mode in ("gil_released", "gil_held"):
                g = python[mode]
                print(f"| g | Python stack, CPython {python['python']}, {python['python_frames']} Python frames, "
                      f"GIL {mode.split('_')[1]} | {g['python_ns']:.0f} ns (native stack {g['native_ns']:.0f} ns, "
                      f"whole attach_stacks {g['attach_stacks_ns']:.0f} ns) |")

    if "i" in figures:
        costs = alloc_overhead(args)
        u, t, d = costs["BM_MemAlloc"]
        print(f"| i | added cost per traced allocation (cuMemAlloc_v2), no stacks, null driver | +{d:.1f} ns "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")
        u, t, d = costs["BM_MemAllocFree"]
        print(f"| i | the same for an allocation + free pair, per call | +{d / 2:.1f} ns "
              f"(pair untraced {u:.1f} ns, traced {t:.1f} ns) |")
        u, t, d = alloc_overhead(args, stacks="all")["BM_MemAlloc"]
        print(f"| i | per traced allocation with call stacks (the default --stacks=all), null driver | +{d:.1f} ns "
              f"(untraced {u:.1f} ns, traced {t:.1f} ns) |")

    if "j" in figures:
        for n in args.memory_events:
            wall, rss, trace_bytes = memory_run(args, n)
            print(f"| j | proftrace memory, {n / 1e6:.0f} M allocation events ({trace_bytes / 1e6:.0f} MB trace), two passes, "
                  f"HTML + JSON + report | {wall:.1f} s ({n / wall / 1e6:.2f} M events/s), peak RSS {rss:.0f} MiB |")

    if "c" in figures:
        print("\nwriter throughput detail:\n")
        print(raw)


if __name__ == "__main__":
    main()
