#!/usr/bin/env python3
"""How far GPU time measured by driver events is from the truth on programs
that launch single kernels on idle streams (NVIDIA's samples do): the
e2e idle_launches program (first launches, repeats, threads each on a stream
of their own), every kernel modelled at one cost, traced with
--gpu-timing=events and with CUPTI (exact on the simulator), with and without
a lazily loaded module's cost in the first launch.

    meson compile -C build bench-events-error

Prints, per case, the measured/modelled ratio of the first launch and the
median, 90th percentile and extremes of all kernels (docs/gpu-time.md quotes
it). Tests never assert these figures; gpu_timing_test.cpp asserts the 2x
bound on one case.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def kernel_durations(args, backend, cost_us, load_ns, work):
    trace = os.path.join(work, "idle.trace")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = args.sim_library_path + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["SIMGPU_KERNEL_COSTS"] = "*=%dus" % cost_us
    env["SIMGPU_MODULE_LOAD_NS"] = str(load_ns)
    env["CUDA_MODULE_LOADING"] = "LAZY"
    subprocess.run([args.launcher, "-o", trace, "--force", "--gpu-timing=" + backend, "--", args.program,
                    "--repeats", "5", "--threads", "2"], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = os.path.join(work, "idle.json")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([args.proftrace, "convert", trace, "-o", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    kernels = sorted((e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"), key=lambda e: e["ts"])
    return [k["dur"] for k in kernels]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--proftrace", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--sim-library-path", required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print("| backend | kernel | module load | first launch | median | p90 | min | max |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for load_ns in (0, 5_000_000):
            for cost_us in (5, 50, 500):
                for backend in ("events", "cupti"):
                    ratios, first = [], []
                    for _ in range(args.runs):
                        durations = kernel_durations(args, backend, cost_us, load_ns, work)
                        first.append(durations[0] / cost_us)
                        ratios += [d / cost_us for d in durations]
                    ratios.sort()
                    print("| %s | %d us | %s | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx |" % (
                        backend, cost_us, "%.0f ms" % (load_ns / 1e6) if load_ns else "-",
                        statistics.median(first), statistics.median(ratios),
                        ratios[int(0.9 * (len(ratios) - 1))], ratios[0], ratios[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
