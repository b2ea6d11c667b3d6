#!/usr/bin/env python3
"""Scale figures: long traces and many ranks.

    meson compile -C build bench-scale      (PROFLAUNCH_SCALE_EVENTS, PROFLAUNCH_SCALE_RANKS
                                             and PROFLAUNCH_SCALE_FIGURES=rs choose)

  r  a trace of 100 M events (the synthetic training loop) through
     proftrace convert (Perfetto protobuf), stats and info, and a trace of
     100 M allocation events through proftrace memory: wall time and peak
     RSS of each command (wait4), file sizes
  s  a 64-rank NCCL job on the simulated stack, each rank under its own
     proflaunch (as under torchrun): the job's wall time traced and untraced,
     the per-rank files merged by proftrace convert and reported by
     proftrace stats (the NCCL sections): wall time and peak RSS

  a  the analyses on synthetic training-loop traces of 2 M and
     PROFLAUNCH_SCALE_EVENTS events (bench-analyses: 10 M): proftrace stats
     (every section), export --sqlite and report: wall time, peak RSS and
     output size at both lengths (the memory must not grow with the trace)

Every command must succeed; the figures are printed as a Markdown table.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time


def timed(command, env=None, stdout=subprocess.DEVNULL):
    """Runs `command`: wall seconds, peak RSS MiB, its stdout (when captured)."""
    start = time.monotonic()
    child = subprocess.Popen(command, env=env, stdout=stdout, stderr=subprocess.PIPE)
    out = child.stdout.read().decode() if stdout == subprocess.PIPE else ""
    err = child.stderr.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        raise SystemExit(f"scale: {' '.join(command[:4])} ... failed ({status}): {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024.0, out


def mb(path_or_paths):
    paths = [path_or_paths] if isinstance(path_or_paths, str) else path_or_paths
    return sum(os.path.getsize(p) for p in paths) / 1e6


def long_trace(args, events, work):
    trace = os.path.join(work, "long.trace")
    wall, _, _ = timed([args.synthetic_trace, "-n", str(events), "-o", trace])
    print(f"| r | synthetic training-loop trace, {events / 1e6:.0f} M events | generated in {wall:.0f} s, "
          f"{mb(trace):.0f} MB ({mb(trace) * 1e6 / events:.1f} B per event) |")
    out = os.path.join(work, "long.pftrace")
    wall, rss, _ = timed([args.proftrace, "convert", trace, "-o", out, "--max-size", "0"])
    print(f"| r | proftrace convert to protobuf | {wall:.0f} s ({events / wall / 1e6:.2f} M events/s), "
          f"peak RSS {rss:.0f} MiB, {mb(out):.0f} MB |")
    os.remove(out)
    wall, rss, _ = timed([args.proftrace, "stats", trace])
    print(f"| r | proftrace stats (every section) | {wall:.0f} s ({events / wall / 1e6:.2f} M events/s), "
          f"peak RSS {rss:.0f} MiB |")
    wall, rss, _ = timed([args.proftrace, "info", trace])
    print(f"| r | proftrace info | {wall:.0f} s, peak RSS {rss:.0f} MiB |")
    os.remove(trace)

    trace = os.path.join(work, "alloc.trace")
    timed([args.synthetic_memory_trace, "-n", str(events), "-o", trace])
    wall, rss, _ = timed([args.proftrace, "memory", trace, "--report", "-o", os.path.join(work, "m.html"),
                          "--json", os.path.join(work, "m.json")])
    print(f"| r | proftrace memory, {events / 1e6:.0f} M allocation events ({mb(trace):.0f} MB), HTML + JSON + "
          f"report | {wall:.0f} s ({events / wall / 1e6:.2f} M events/s), peak RSS {rss:.0f} MiB |")
    os.remove(trace)


def many_ranks(args, ranks, iterations, work):
    env = dict(os.environ, LD_LIBRARY_PATH=args.sim_library_path)
    job = ["--ops", "allreduce,allgather,reducescatter,broadcast", "--iterations", str(iterations)]
    untraced, _, _ = timed([args.torchrun_like, "--nproc", str(ranks), args.nccl_ranks] + job, env=env)
    pattern = os.path.join(work, "rank%q{RANK}.trace")
    traced, _, _ = timed([args.torchrun_like, "--nproc", str(ranks), args.launcher, "-q", "-o", pattern, "--",
                          args.nccl_ranks] + job, env=env)
    files = sorted(glob.glob(os.path.join(work, "rank*.trace")))
    if len(files) != ranks:
        raise SystemExit(f"scale: {len(files)} rank files, expected {ranks}")
    print(f"| s | {ranks}-rank NCCL job ({iterations} iterations of 4 collectives), a proflaunch per rank | "
          f"{traced:.1f} s traced, {untraced:.1f} s untraced; {len(files)} files, {mb(files):.1f} MB |")
    out = os.path.join(work, "all.pftrace")
    wall, rss, _ = timed([args.proftrace, "convert"] + files + ["-o", out, "--max-size", "0"])
    print(f"| s | proftrace convert of the {ranks} files into one timeline | {wall:.1f} s, peak RSS {rss:.0f} MiB, "
          f"{mb(out):.1f} MB |")
    wall, rss, report = timed([args.proftrace, "stats"] + files + ["--section", "nccl-collectives", "nccl-ranks"],
                              stdout=subprocess.PIPE)
    print(f"| s | proftrace stats (nccl-collectives, nccl-ranks) on the {ranks} files | {wall:.1f} s, "
          f"peak RSS {rss:.0f} MiB ({len(report.splitlines())} lines of report) |")
    with open(os.path.join(work, "nccl-report.txt"), "w") as f:
        f.write(report)
    return report


def analyses(args, lengths, work):
    for events in lengths:
        trace = os.path.join(work, "analyses.trace")
        timed([args.synthetic_trace, "-n", str(events), "-o", trace])
        label = f"{events / 1e6:.0f} M events ({mb(trace):.0f} MB)"
        wall, rss, _ = timed([args.proftrace, "stats", trace])
        print(f"| a | proftrace stats (every section), {label} | {wall:.1f} s, peak RSS {rss:.0f} MiB |")
        database = os.path.join(work, "analyses.sqlite")
        wall, rss, _ = timed([args.proftrace, "export", "--sqlite", database, trace])
        print(f"| a | proftrace export --sqlite, {label} | {wall:.1f} s, peak RSS {rss:.0f} MiB, "
              f"{mb(database):.0f} MB |")
        os.remove(database)
        page = os.path.join(work, "report.html")
        wall, rss, _ = timed([args.proftrace, "report", "-q", trace, "-o", page])
        print(f"| a | proftrace report, {label} | {wall:.1f} s, peak RSS {rss:.0f} MiB, page {mb(page):.1f} MB |")
        os.remove(page)
        os.remove(trace)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("launcher", "proftrace", "synthetic_trace", "synthetic_memory_trace", "torchrun_like",
                 "nccl_ranks", "sim_library_path"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    args = parser.parse_args()
    figures = os.environ.get("PROFLAUNCH_SCALE_FIGURES", "rs")
    events = int(os.environ.get("PROFLAUNCH_SCALE_EVENTS", "100000000"))
    ranks = int(os.environ.get("PROFLAUNCH_SCALE_RANKS", "64"))
    print(f"# proflaunch scale ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f})\n")
    print("| # | what | figure |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="proflaunch-scale.") as work:
        if "r" in figures:
            long_trace(args, events, work)
        if "a" in figures:
            analyses(args, sorted({min(2_000_000, events), events}), work)
        if "s" in figures:
            report = many_ranks(args, ranks, 20, work)
            print("\nnccl-ranks report (head):\n")
            print("\n".join(report.splitlines()[:40]))


if __name__ == "__main__":
    main()
