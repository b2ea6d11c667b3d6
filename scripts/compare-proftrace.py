#!/usr/bin/env python3
"""Runs every proftrace output with two builds of proftrace on the same traces
and says where they differ: the check that a change to proftrace's structure
kept every output byte for byte.

Usage:
  scripts/compare-proftrace.py OLD_PROFTRACE NEW_PROFTRACE TRACE_OR_DIR...

A directory stands for every *.trace in it, taken together as one input set
(the per-rank files of one job) and each alone. The outputs compared: info,
dump, convert to JSON and to .pftrace, stats as text and --json, export
--sqlite (each table's rows, in rowid order), memory as text and --json,
report --json. Exit status 0 when all are equal, 1 when any differs, 2 on
bad arguments.

Where the traces come from: PROFLAUNCH_TEST_KEEP=DIR keeps the files of every
end-to-end test (tests/unit/preload/support/process_runner.cpp), e.g.
  mkdir /tmp/kept && PROFLAUNCH_TEST_KEEP=/tmp/kept meson test -C build --suite e2e
and build/tools/synthetic_trace/proflaunch-synthetic-trace writes a long one.
"""
import glob
import hashlib
import os
import sqlite3
import subprocess
import sys
import tempfile

COMMANDS = [
    ("info", lambda out: ["info"], None),
    ("dump", lambda out: ["dump"], None),
    ("convert.json", lambda out: ["convert", "--quiet", "-o", out + ".json"], ".json"),
    ("convert.pftrace", lambda out: ["convert", "--quiet", "-o", out + ".pftrace"], ".pftrace"),
    ("stats", lambda out: ["stats"], None),
    ("stats.json", lambda out: ["stats", "--json"], None),
    ("export.sqlite", lambda out: ["export", "--quiet", "--force", "--sqlite", out + ".sqlite"], ".sqlite"),
    ("memory", lambda out: ["memory"], None),
    ("memory.json", lambda out: ["memory", "--json", out + ".memory.json"], ".memory.json"),
    ("report.json", lambda out: ["report", "--quiet", "-o", out + ".html", "--json", "-"], None),
]


def sqlite_digest(path):
    digest = hashlib.sha256()
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        for table in tables:
            digest.update(table.encode())
            try:
                rows = db.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
            except sqlite3.OperationalError:  # WITHOUT ROWID: in primary key order
                rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
            for row in rows:
                digest.update(repr(row).encode())
    return digest.hexdigest()


def run(proftrace, name, make_args, suffix, inputs, scratch):
    base = os.path.join(scratch, "out")
    for leftover in glob.glob(base + "*"):
        os.remove(leftover)
    args = [proftrace] + make_args(base) + inputs
    result = subprocess.run(args, capture_output=True)
    digest = hashlib.sha256()
    digest.update(b"exit %d\n" % result.returncode)
    # The streams name the output path, which both runs share.
    digest.update(result.stdout)
    digest.update(result.stderr)
    if suffix is not None and os.path.exists(base + suffix):
        if suffix == ".sqlite":
            digest.update(sqlite_digest(base + suffix).encode())
        else:
            with open(base + suffix, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    # Split protobuf outputs (x.2.pftrace, ...) count too.
    for extra in sorted(glob.glob(base + ".*.pftrace")):
        with open(extra, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest(), result


def input_sets(paths):
    sets = []
    for path in paths:
        if not os.path.isdir(path):
            sets.append([path])
            continue
        # Each trace alone; the traces of one folder together (the ranks of one job).
        by_folder = {}
        for trace in sorted(glob.glob(os.path.join(path, "**", "*.trace"), recursive=True)):
            if os.path.isfile(trace):
                sets.append([trace])
                by_folder.setdefault(os.path.dirname(trace), []).append(trace)
        sets.extend(traces for traces in by_folder.values() if len(traces) > 1)
    return sets


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = argv[1], argv[2]
    sets = input_sets(argv[3:])
    differences = 0
    with tempfile.TemporaryDirectory(prefix="compare-proftrace-") as scratch:
        for inputs in sets:
            label = " ".join(os.path.relpath(p) for p in inputs) if len(inputs) < 4 else \
                f"{os.path.dirname(inputs[0])} ({len(inputs)} traces)"
            for name, make_args, suffix in COMMANDS:
                old_digest, old_result = run(old, name, make_args, suffix, inputs, scratch)
                new_digest, new_result = run(new, name, make_args, suffix, inputs, scratch)
                if old_digest != new_digest:
                    differences += 1
                    print(f"DIFFERS {name}: {label} (exit {old_result.returncode} -> {new_result.returncode})")
        print(f"compare-proftrace: {len(sets)} input sets x {len(COMMANDS)} outputs, {differences} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
