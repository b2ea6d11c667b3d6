#!/usr/bin/env python3
"""The memory page end to end in a real browser.

Runs memory_phases under proflaunch, writes `proftrace memory -o` for its
trace, and hands the page to tests/browser/memory_page_test.mjs (headless
Chromium through playwright-core) together with what the program itself says
it did. The page and a screenshot stay in --out-dir.

Skips (exit 77) with the reason when node, /usr/bin/chromium or the npm
packages (scripts/install-deps.sh runs `npm ci` in tests/browser) are missing.

    memory_page_browser_test.py --proflaunch P --proftrace T --program memory_phases
        --library-path LD_PATH --browser-dir tests/browser --out-dir DIR
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
CHROMIUM = "/usr/bin/chromium"


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def run(command, env=None):
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def summary_fields(program_output):
    line = next((l for l in program_output.splitlines() if l.startswith("memory_phases:")), None)
    if line is None:
        sys.exit(f"memory_phases printed no summary:\n{program_output}")
    return dict(re.findall(r"(\w+)=(\S+)", line))


def main():
    parser = argparse.ArgumentParser()
    for name in ("proflaunch", "proftrace", "program", "library_path", "browser_dir", "out_dir"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    args = parser.parse_args()

    node = shutil.which("node")
    if node is None:
        skip("node is not installed (scripts/install-deps.sh installs it)")
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"{CHROMIUM} is missing (Debian's chromium package; scripts/install-deps.sh installs it)")
    if not os.path.isdir(os.path.join(args.browser_dir, "node_modules", "playwright-core")):
        skip(f"playwright-core is not installed: run `npm ci` in {args.browser_dir} (scripts/install-deps.sh does)")

    os.makedirs(args.out_dir, exist_ok=True)
    page = os.path.join(args.out_dir, "memory_page.html")
    screenshot = os.path.join(args.out_dir, "memory_page.png")
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "phases.trace")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROFLAUNCH_") and k != "LD_PRELOAD"}
        env.update(LD_LIBRARY_PATH=args.library_path, SIMGPU_DEVICE_MEMORY_MIB="2048")
        # A long plateau at the peak: the hover check lands on it.
        said = summary_fields(run([args.proflaunch, "-q", "-o", trace, "--", args.program, "--hold-ms", "80"], env))
        run([args.proftrace, "memory", trace, "-o", page])
        expected = {
            "device": {
                "peak_bytes": int(said["peak_allocated"]),
                "live_at_peak": [int(b) for b in said["live_at_peak"].split(",")],
                "failures": int(said["failures"]),
                "failed_request": int(said["failed_request"]),
            },
            "host": {"peak_bytes": int(said["pinned_peak"]), "failures": int(said["pinned_failures"])},
        }
        expected_path = os.path.join(work, "expected.json")
        with open(expected_path, "w") as f:
            json.dump(expected, f)
        test = os.path.join(args.browser_dir, "memory_page_test.mjs")
        result = subprocess.run([node, test, page, expected_path, screenshot], cwd=args.browser_dir, timeout=120)
        sys.exit(result.returncode)


if __name__ == "__main__":
    main()
