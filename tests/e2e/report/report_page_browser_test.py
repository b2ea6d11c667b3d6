#!/usr/bin/env python3
"""The report page end to end in a real browser.

Three runs on the simulated stack, each under the real launcher and shim:
the sample training loop (with the simulated NVML, so the launcher samples
device metrics and the overview charts them), a deliberately bad program (recommendations_loop:
pageable synchronous copies, an .item()-style read every step, a tiny grid,
allocator churn, the GPU left idle, each at a marked source line) and a 4-rank NCCL job
recorded one file per rank. For each, `proftrace report` writes the page
and `proftrace stats --json` the same analyses; tests/browser/
report_page_test.mjs (headless Chromium through playwright-core) checks that
every table on the page holds exactly what stats says, that each problem the
bad program makes is named with its line, that sorting, filtering, expanding
and the code view's aggregations work, and leaves a screenshot of every tab
in --out-dir/<run>/.

Skips (exit 77) with the reason when node, /usr/bin/chromium or the npm
packages (scripts/install-deps.sh runs `npm ci` in tests/browser) are missing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
RANKS = 4


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def run(command, env=None, cwd=None):
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def marked_lines(source):
    """{marker name: "recommendations_loop.cu:<line>"} for each `// @site:NAME`."""
    lines = {}
    with open(source) as f:
        for number, line in enumerate(f, 1):
            if "// @site:" in line:
                name = line.split("// @site:", 1)[1].split()[0]
                lines[name] = f"{os.path.basename(source)}:{number}"
    return lines


def main():
    parser = argparse.ArgumentParser()
    for name in ("proflaunch", "proftrace", "training_loop", "bad_program", "bad_source", "nccl_ranks",
                 "torchrun_like", "library_path", "nvml_dir", "browser_dir", "out_dir"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    args = parser.parse_args()

    node = shutil.which("node")
    if node is None:
        skip("node is not installed (scripts/install-deps.sh installs it)")
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"{CHROMIUM} is missing (Debian's chromium package; scripts/install-deps.sh installs it)")
    if not os.path.isdir(os.path.join(args.browser_dir, "node_modules", "playwright-core")):
        skip(f"playwright-core is not installed: run `npm ci` in {args.browser_dir} (scripts/install-deps.sh does)")

    env = {k: v for k, v in os.environ.items() if not k.startswith("PROFLAUNCH_") and k != "LD_PRELOAD"}
    env.update(LD_LIBRARY_PATH=args.library_path)
    sites = marked_lines(args.bad_source)
    site = lambda name: sites[name]
    failed = False
    with tempfile.TemporaryDirectory() as work:
        # name, traces, what the page must say beyond what stats says
        runs = []
        trace = os.path.join(work, "sample.trace")
        # The devices' state files of this run only (the simulated driver
        # publishes them, the simulated NVML reads them).
        with_nvml = dict(env, LD_LIBRARY_PATH=args.library_path + ":" + args.nvml_dir,
                         SIMGPU_STATE_DIR=os.path.join(work, "device-state"))
        run([args.proflaunch, "-q", "-o", trace, "--", args.training_loop, "--steps", "12"], with_nvml)
        runs.append(("sample", [trace], {"ranks": 0, "metrics": True}))

        trace = os.path.join(work, "bad.trace")
        run([args.proflaunch, "-q", "-o", trace, "--", args.bad_program], env)
        runs.append(("bad", [trace], {"ranks": 0, "found": {
            "pageable-sync-copy": [site("upload")],
            "item-read": [site("item_read")],
            "steady-state-alloc": [site("scratch_alloc"), site("scratch_free")],
            "small-grid": [site("tiny_kernel")],
            # The 20 ms sleep after the read: the calls on either side of the gap.
            "gpu-idle-gap": [site("item_read"), site("scratch_free")],
        }}))

        run([args.torchrun_like, "--nproc", str(RANKS), args.proflaunch, "-q", "-o",
             os.path.join(work, "rank%q{RANK}.trace"), "--", args.nccl_ranks, "--ops", "allreduce,allgather",
             "--iterations", "3"], env)
        runs.append(("nccl", [os.path.join(work, f"rank{r}.trace") for r in range(RANKS)], {"ranks": RANKS}))

        for name, traces, expected in runs:
            out = os.path.join(args.out_dir, name)
            os.makedirs(out, exist_ok=True)
            page = os.path.join(out, "report.html")
            run([args.proftrace, "report", "-q", *traces, "-o", page])
            stats = os.path.join(work, name + "-stats.json")
            document = json.loads(run([args.proftrace, "stats", "--json", "--top", "200", "--timeline-bins", "240",
                                       *traces]))
            for by in ("function", "file", "module"):  # the page's other code views
                for table in json.loads(run([args.proftrace, "stats", "--json", "--top", "200", "--section", "code",
                                             "--by", by, *traces]))["tables"]:
                    table["section"] = "code-" + by
                    document["tables"].append(table)
            with open(stats, "w") as f:
                json.dump(document, f)
            expected_path = os.path.join(work, name + "-expected.json")
            with open(expected_path, "w") as f:
                json.dump(expected, f)
            print(f"--- {name}: {page}", flush=True)
            test = os.path.join(args.browser_dir, "report_page_test.mjs")
            result = subprocess.run([node, test, page, stats, expected_path, out], cwd=args.browser_dir, timeout=180)
            failed |= result.returncode != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
