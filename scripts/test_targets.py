#!/usr/bin/env python3
"""Prints the ninja targets that the selected tests of a configured meson
build need (the tests' executables and everything their `depends:` names),
so a sanitizer build compiles those and not the whole tree.

Usage: scripts/test_targets.py BUILD_DIR [--suite S]... [TEST_NAME]...
A test is selected when it is named or is in one of the suites (a suite
matches as `meson test --suite` does: the full name or the part after the
project name, `proflaunch:e2e` or `e2e`)."""
import json
import os
import subprocess
import sys


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build_dir = argv[1]
    suites, names = set(), set()
    args = iter(argv[2:])
    for word in args:
        if word == "--suite":
            suites.add(next(args, ""))
        else:
            names.add(word)

    def introspect(what):
        out = subprocess.run(["meson", "introspect", build_dir, what], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)

    def in_suites(test):
        for suite in test["suite"]:
            parts = {suite, suite.split(":", 1)[-1]}
            parts.update(suite.split(":", 1)[-1].split("+"))
            if parts & suites:
                return True
        return False

    tests = [t for t in introspect("--tests") if t["name"] in names or in_suites(t)]
    missing = names - {t["name"] for t in tests}
    if missing:
        print("test_targets.py: no such test: " + ", ".join(sorted(missing)), file=sys.stderr)
        return 1
    wanted = {dep for t in tests for dep in t["depends"]}
    # The simulated GPU stack's libraries (libcuda.so.1, libcupti, libnccl,
    # libamdhip64...) are found at run time through LD_LIBRARY_PATH or
    # dlopen, not linked, so the tests that use them do not name them: a
    # selection with any test whose environment points into tests/simgpu
    # gets all of them.
    simgpu = any("/simgpu/" in str(value) for t in tests for value in (t.get("env") or {}).values())
    root = os.path.realpath(build_dir)
    outputs = set()
    for target in introspect("--targets"):
        files = [os.path.relpath(os.path.realpath(path), root) for path in target["filename"]]
        runtime_library = target["type"] == "shared library" and any(f.startswith("tests/simgpu/") for f in files)
        if target["id"] in wanted or (simgpu and runtime_library):
            outputs.update(files)
    print("\n".join(sorted(outputs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
