#!/usr/bin/env python3
"""Run Meta's Holistic Trace Analysis (HTA) on `proftrace convert` output and
compare its answers with `proftrace stats` on the same traces (issue 40).

    hta-check.py BUILD_DIR HTA_SRC_DIR [--work DIR]

BUILD_DIR: a configured and built proflaunch build (its launcher, proftrace and
the simulated GPU stack under tests/). HTA_SRC_DIR: a checkout of
facebookresearch/HolisticTraceAnalysis (the directory holding `hta/`).
Records (1) the training loop twice (the second for trace diff), (2) the NVTX
program, (3) a 4-rank NCCL job with rank 2 slow (torchrun_like + nccl_ranks),
converts each to its own directory (one JSON per rank), then runs each HTA
analysis and prints one line per analysis: ran or failed, HTA's number and
stats' number. Exit status 0 whatever the findings; 2 on a setup error.

Installs nothing. Needs Python 3 with HTA's dependencies; on Debian 12:
  apt-get install python3-pandas python3-numpy python3-plotly \
      python3-networkx python3-yaml python3-psutil python3-pydot
Run it with that python (/usr/bin/python3). HTA_DISABLE_NS_ROUNDING=1 is set
(HTA otherwise rounds every ts and end to whole microseconds).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("hta")
ap.add_argument("--work", help="keep the traces and JSON here (default: a temporary directory, removed)")
opts = ap.parse_args()
build = os.path.abspath(opts.build)
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
sys.path.insert(0, os.path.abspath(opts.hta))
try:
    import pandas as pd
    from hta.trace_analysis import TraceAnalysis
    from hta.trace_diff import TraceDiff
except ImportError as e:
    sys.exit(f"hta-check: cannot import HTA or its dependencies ({e}); see the docstring")
import logging
logging.disable(logging.WARNING)  # HTA logs every parse at WARNING
pd.set_option("display.width", 200)
pd.set_option("display.max_colwidth", 50)

if opts.work:
    work = opts.work
    os.makedirs(work, exist_ok=True)
else:
    work = tempfile.mkdtemp(prefix="hta-check.")
    import atexit
    import shutil
    atexit.register(shutil.rmtree, work, True)
sim = f"{build}/tests/simgpu"
env = dict(os.environ)
env["LD_LIBRARY_PATH"] = ":".join(f"{sim}/{d}" for d in ("driver", "runtime", "libs", "nccl", "cupti"))
for k in ("LD_PRELOAD", "PROFLAUNCH_GPU_TIMING", "SIMGPU_KERNEL_COSTS"):
    env.pop(k, None)
proflaunch = f"{build}/launcher/proflaunch"
proftrace = f"{build}/tools/proftrace"
programs = f"{sim}/programs"
nvtx_ranges = f"{build}/tests/e2e/nvtx/programs/e2e_nvtx_ranges"
RANKS = 4
SLOW = 2


def sh(*cmd):
    subprocess.run(["nice", *cmd], env=env, check=True, stdout=subprocess.DEVNULL)


def record(name, *program):
    os.makedirs(f"{work}/{name}", exist_ok=True)
    sh(proflaunch, "-q", "--force", "-o", f"{work}/{name}.trace", "--", *program)
    sh(proftrace, "convert", "-q", f"{work}/{name}.trace", "-o", f"{work}/{name}/{name}.json")


def stats(*traces):
    out = subprocess.run(["nice", proftrace, "stats", "--json", *traces], env=env, check=True,
                         stdout=subprocess.PIPE).stdout
    return {t["title"]: t for t in json.loads(out)["tables"]}


record("train", f"{programs}/training_loop", "--steps", "6")
record("train2", f"{programs}/training_loop", "--steps", "6")
record("nvtx", nvtx_ranges, "--steps", "4")
os.makedirs(f"{work}/nccl", exist_ok=True)
sh(f"{programs}/torchrun_like", "--nproc", str(RANKS), proflaunch, "-q", "--force", "-o", f"{work}/rank%q{{RANK}}.trace",
   "--", f"{programs}/nccl_ranks", "--ops", "allreduce,allgather", "--iterations", "4",
   "--slow-rank", str(SLOW), "--delay-ms", "50")
for r in range(RANKS):
    sh(proftrace, "convert", "-q", f"{work}/rank{r}.trace", "-o", f"{work}/nccl/rank{r}.json")
if opts.work:
    print(f"traces and JSON in {work}")

results = []  # (trace, analysis, ran, hta says, stats says)


def analysis(trace, name):
    def wrap(fn):
        try:
            hta, ours = fn()
            results.append((trace, name, "yes", hta, ours))
        except Exception as e:  # noqa: BLE001 - a failing analysis is a finding
            where = traceback.extract_tb(e.__traceback__)[-1]
            results.append((trace, name, "NO", f"{type(e).__name__}: {e} "
                            f"({os.path.basename(where.filename)}:{where.lineno})", ""))
    return wrap


def rows(table):
    return table["rows"] if table else []


def kernel_times(st):
    """stats' GPU time per kernel name and per memory-op family, in us."""
    k = {r["Name"]: r["Total Time (ns)"] / 1e3 for r in rows(st.get("GPU kernels: time per kernel name"))}
    mem = sum(r["Total Time (ns)"] or 0
              for r in rows(st.get("Memory operations: GPU time and bytes per kind"))) / 1e3
    return k, mem


def json_events(path):
    with open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def union_us(events):
    total, end = 0.0, None
    for ts, te in sorted((e["ts"], e["ts"] + e["dur"]) for e in events):
        if end is None or ts > end:
            total, start, end = total + (end - start if end is not None else 0), ts, te
        else:
            end = max(end, te)
    return total + (end - start if end is not None else 0)


GPU_WORK = ("kernel", "gpu_memcpy", "gpu_memset")


def on_stream(e):
    return e.get("args", {}).get("stream", -1) != -1


def busy_us(st):
    r = [r for r in rows(st.get("Overview: GPU utilization")) if r["PID"] == "all"]
    return r[0]["Busy (ns)"] / 1e3 if r else None


def check_single(label, trace_file, steps):
    st = stats(trace_file)
    ta = TraceAnalysis(trace_dir=f"{work}/{label}", include_last_profiler_step=True)

    @analysis(label, "profiler steps")
    def _():
        return ta.get_profiler_steps(), f"{steps} steps (convert's ProfilerStep#)"

    @analysis(label, "kernel breakdown")
    def _():
        by_type, by_kernel = ta.get_gpu_kernel_breakdown(visualize=False, num_kernels=1000,
                                                        duration_ratio=1.0)
        k, mem = kernel_times(st)
        hk = by_kernel[~by_kernel["name"].str.startswith(("Memcpy", "Memset"))]
        hk = {r["name"]: r["sum (us)"] for _, r in hk.iterrows()}
        worst = max((abs(hk.get(n, 0) - v), n) for n, v in k.items()) if k else (0, "")
        hm = by_type.loc[by_type["kernel_type"] == "MEMORY", "sum"].sum()
        return (f"{len(hk)} kernels, max |HTA-stats| {worst[0]:.3f} us; memory {hm:.1f} us",
                f"{len(k)} kernels; memory ops {mem:.1f} us")

    events = json_events(f"{work}/{label}/{label}.json")

    @analysis(label, "temporal breakdown")
    def _():
        t = ta.get_temporal_breakdown(visualize=False).iloc[0]
        with_sync = union_us([e for e in events if on_stream(e)])
        return (f"span {t['kernel_time(us)']:.1f} us, idle {t['idle_time(us)']:.1f}, "
                f"busy {t['kernel_time(us)'] - t['idle_time(us)']:.1f}",
                f"busy {busy_us(st):.1f} us; the JSON's kernels+copies+memsets {union_us([e for e in events if e['cat'] in GPU_WORK]):.1f}, "
                f"with cuda_sync on a stream {with_sync:.1f}")

    @analysis(label, "idle time breakdown")
    def _():
        idle, _stats = ta.get_idle_time_breakdown(visualize=False)
        hta = idle.groupby("stream")["idle_time"].sum().round(1).to_dict()
        ours = {}
        for sid in hta:
            evs = [e for e in events if e["cat"] in GPU_WORK and e["args"].get("stream") == sid]
            span = max(e["ts"] + e["dur"] for e in evs) - min(e["ts"] for e in evs)
            ours[sid] = round(span - union_us(evs), 1)
        return (f"idle us per stream {hta}; by category {idle.groupby('idle_category')['idle_time'].sum().round(1).to_dict()}",
                f"no per-stream idle in stats; the JSON's stream span - busy {ours}")

    @analysis(label, "queue length")
    def _():
        q = ta.get_queue_length_summary()
        q = q["queue_length"]
        return (f"{len(q)} streams, max per stream {q['max'].to_dict()}", "no counterpart")

    @analysis(label, "memory bandwidth")
    def _():
        m = ta.get_memory_bw_summary()
        mo = {r["Operation"]: r["Bandwidth (GB/s)"]
              for r in rows(st.get("Memory operations: GPU time and bytes per kind"))}
        m = m["memory_bw_gbps"].droplevel(0)
        return (f"max GB/s (one op's bytes/dur) {m['max'].round(2).to_dict()}",
                f"bandwidth GB/s (bytes/time summed per kind) {mo}")

    @analysis(label, "kernel launch stats")
    def _():
        d = ta.get_cuda_kernel_launch_stats(visualize=False)
        df = next(iter(d.values()))
        calls = {r["Name"]: r["Num Calls"] for r in rows(st.get("API calls: host time per API"))}
        runtime = sum(calls.get(n, 0) for n in ("cudaLaunchKernel", "cudaLaunchKernelExC",
                                                "cudaMemcpyAsync", "cudaMemsetAsync"))
        return (f"{len(df)} launch/GPU pairs, launch delay max {df['launch_delay'].max():.1f} us",
                f"{runtime} cudaLaunchKernel(ExC)/cudaMemcpyAsync/cudaMemsetAsync calls; "
                f"{calls.get('cuLaunchKernel', 0)} cuLaunchKernel (HTA leaves driver launches out)")

    @analysis(label, "critical path (whole trace)")
    def _():
        it = ta.get_profiler_steps()
        if not it:
            return "not run: no ProfilerStep in the file to bound it", "no steps found either"
        g, ok = ta.critical_path_analysis(rank=0, annotation="ProfilerStep",
                                          instance_id=(int(it[0]), int(it[-1])))
        s = g.summary()
        return f"ok={ok}, {len(g.critical_path_nodes)} nodes: " + str(s.round(1).to_dict()), "no counterpart"

    @analysis(label, "critical path (per ProfilerStep)")
    def _():
        out = []
        for i in ta.get_profiler_steps():
            g, ok = ta.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=int(i))
            out.append(f"#{i}:{'ok' if ok else 'FAIL'}/{len(g.critical_path_nodes)}")
        return " ".join(out), "no counterpart"

    return ta


check_single("train", f"{work}/train.trace", 6)
check_single("nvtx", f"{work}/nvtx.trace", 0)

# The NVTX program has no steps convert can find (its "step N" ranges all have different names;
# its module's ranges launch no GPU work, so they are not taken for steps): the critical path
# with its "forward" ranges as the steps.
os.makedirs(f"{work}/nvtx_forward", exist_ok=True)
sh(proftrace, "convert", "-q", "--step-range", "forward", f"{work}/nvtx.trace",
   "-o", f"{work}/nvtx_forward/nvtx_forward.json")
fta = TraceAnalysis(trace_dir=f"{work}/nvtx_forward", include_last_profiler_step=True)


@analysis("nvtx --step-range forward", "critical path (per ProfilerStep)")
def _():
    out = []
    for i in fta.get_profiler_steps():
        g, ok = fta.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=int(i))
        out.append(f"#{i}:{'ok' if ok else 'FAIL'}/{len(g.critical_path_nodes)}")
    return " ".join(out), "no counterpart"


# trace diff: the same program recorded twice
@analysis("train vs train2", "trace diff")
def _():
    d = TraceDiff.compare_traces(f"{work}/train", f"{work}/train2")
    changed = d[d["diff_counts"] != 0] if "diff_counts" in d.columns else d
    return f"{len(d)} ops compared, {len(changed)} with different counts", "same program: 0 expected"


# the NCCL job
nst = stats(*(f"{work}/rank{r}.trace" for r in range(RANKS)))
nta = TraceAnalysis(trace_dir=f"{work}/nccl", include_last_profiler_step=True)


@analysis("nccl", "ranks loaded")
def _():
    return nta.t.get_ranks(), list(range(RANKS))


@analysis("nccl", "stragglers")
def _():
    s = nta.get_potential_stragglers(num_candidates=1)
    note = [n for n in nst["NCCL ranks: compute, communication and waiting per rank"]["notes"]
            if "straggler" in n]
    return s, note[0] if note else None


@analysis("nccl", "stragglers, HTA's metric with ncclDevKernel names and no duration threshold")
def _():
    from hta.analyzers import straggler as hs
    from hta.common.trace_symbol_table import TraceSymbolTable

    def relaxed(df, symbol_table, n_stragglers=2, visualize=False):
        # HTA's metric (start of the last comm kernel, normalized), with NCCL >= 2.19's kernel
        # names added to the symbols it looks for and its 1 % duration threshold at 0
        table = TraceSymbolTable()
        table.add_symbols(symbol_table.get_sym_table())
        renamed = {s: s.replace("ncclDevKernel", "ncclKernel") for s in table.get_sym_table()
                   if s.startswith("ncclDevKernel")}
        table.add_symbols(list(renamed.values()))
        df = df.copy()
        ids = table.get_sym_id_map()
        df["name"] = df["name"].map(lambda i: ids[renamed.get(table.get_sym_table()[i], table.get_sym_table()[i])])
        metric, name = hs._compute_normalized_start_time_of_significant_comm_kernels(
            df, table, False, min_normalized_duration=0.0)
        return hs._get_top_k_stragglers_with_metric(metric, name, visualize=False, n_stragglers=n_stragglers)

    s = nta.get_potential_stragglers(num_candidates=1, straggler_identification_impl=relaxed)
    return s, f"slow rank {SLOW}"


@analysis("nccl", "NCCL kernel time, JSON dur vs stats")
def _():
    hta = {}
    for r in range(RANKS):
        hta[r] = round(sum(e["dur"] for e in json_events(f"{work}/nccl/rank{r}.json")
                           if e["cat"] == "kernel" and e["name"].startswith("nccl")), 1)
    ours = {r["Rank"]: round(r["Communication (ns)"] / 1e3, 1) for r in
            rows(nst.get("NCCL ranks: compute, communication and waiting per rank"))}
    return f"JSON nccl kernel dur summed, us per rank {hta}", f"stats communication us per rank {ours}"


@analysis("nccl", "comm/comp overlap")
def _():
    o = nta.get_comm_comp_overlap(visualize=False)
    ours = {r["Rank"]: r["Overlap (ns)"] for r in
            rows(nst.get("NCCL ranks: compute, communication and waiting per rank"))}
    return o.round(2).to_dict("records"), f"overlap ns per rank {ours}"


@analysis("nccl", "kernel breakdown")
def _():
    by_type, _k = nta.get_gpu_kernel_breakdown(visualize=False)
    ours = {r["Rank"]: (r["Compute (ns)"], r["Communication (ns)"]) for r in
            rows(nst.get("NCCL ranks: compute, communication and waiting per rank"))}
    return (by_type.to_dict("records"), f"(compute, communication) ns per rank {ours}")


@analysis("nccl", "temporal breakdown")
def _():
    t = nta.get_temporal_breakdown(visualize=False)
    t["busy"] = t["kernel_time(us)"] - t["idle_time(us)"]
    ours = {r["PID"]: r["Busy (ns)"] / 1e3 for r in rows(nst.get("Overview: GPU utilization"))}
    return t[["rank", "busy", "idle_time(us)"]].round(1).to_dict("records"), f"busy us per pid {ours}"


@analysis("nccl", "critical path (rank 2, step 1)")
def _():
    g, ok = nta.critical_path_analysis(rank=SLOW, annotation="ProfilerStep", instance_id=1)
    if not ok:
        return "ok=False", "no counterpart"
    return f"ok={ok}, {len(g.critical_path_nodes)} nodes", "no counterpart"


print()
for trace, name, ran, hta, ours in results:
    print(f"== {trace} / {name}: runs {ran}\n   HTA:   {hta}\n   stats: {ours}")
