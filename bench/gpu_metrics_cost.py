#!/usr/bin/env python3
"""Figure v: what the launcher's device sampler costs (launcher/gpu_metrics).

Runs tests/simgpu/programs/device_load (busy and idle phases, 10 ms kernels)
under proflaunch on the simulated stack with the simulated NVML, for a few
device counts, each with --gpu-metrics=HZ and with --gpu-metrics=off, and
prints per run:
  - the sampler thread's CPU time per second of run (its own CLOCK_THREAD_CPUTIME_ID,
    from the launcher's -v line "device metrics: ... sampler CPU N us"),
  - the bytes per second the samples add to the trace (trace with minus trace
    without, over the run's wall time; both traces hold the same program),
  - the program's wall time with and without the sampler.
The program's hooks are not touched by the sampler (it runs in the launcher),
so the last figure only shows that nothing changed beyond noise.

usage: gpu_metrics_cost.py --proflaunch P --device-load D --library-path L --nvml-dir N
                           [--hz 10] [--devices 1 2 8] [--seconds 10]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time


def run(args, hz, devices, seconds, directory):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = args.library_path + ":" + args.nvml_dir
    env["SIMGPU_STATE_DIR"] = os.path.join(directory, "devices")
    env["SIMGPU_DEVICE_COUNT"] = str(devices)
    env["SIMGPU_KERNEL_COSTS"] = "*=10ms"
    trace = os.path.join(directory, f"{hz}-{devices}.trace")
    cycles = max(1, int(seconds / 1.0))
    command = [args.proflaunch, "-v", f"--gpu-metrics={hz}", "--no-symbols", "-o", trace, "--",
               args.device_load, "--busy-ms", "500", "--idle-ms", "500", "--cycles", str(cycles)]
    start = time.monotonic()
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - start
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr}")
    cpu_us = None
    match = re.search(r"device metrics: (\d+) devices, (\d+) readings, (\d+) samples, sampler CPU (\d+) us",
                      result.stderr)
    if match:
        cpu_us = int(match.group(4))
    return {"wall": wall, "bytes": os.path.getsize(trace), "cpu_us": cpu_us,
            "readings": int(match.group(2)) if match else 0, "samples": int(match.group(3)) if match else 0}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("proflaunch", "device_load", "library_path", "nvml_dir"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    parser.add_argument("--hz", type=int, default=10)
    parser.add_argument("--devices", type=int, nargs="*", default=[1, 2, 8])
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for devices in args.devices:
            on = run(args, args.hz, devices, args.seconds, directory)
            off = run(args, "off", devices, args.seconds, directory)
            extra = on["bytes"] - off["bytes"]
            print(f"v: {devices} device(s) at {args.hz} Hz: sampler CPU {on['cpu_us'] / on['wall'] / 1000:.3f} ms/s "
                  f"({on['readings']} readings, {on['samples']} samples in {on['wall']:.1f} s), "
                  f"trace +{extra / on['wall']:.0f} B/s ({extra} B), "
                  f"program wall {on['wall']:.2f} s with, {off['wall']:.2f} s without")


if __name__ == "__main__":
    main()
