#!/usr/bin/env python3
"""Runs an nvcc-built program on the simulated stack and checks what it did.

Exit status follows meson's test protocol: 0 pass, 1 fail, 77 skip.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip", metavar="REASON",
                        help="skip the test with this reason (e.g. nvcc not found)")
    parser.add_argument("--expect", action="append", default=[], metavar="REGEX",
                        help="a line of stdout must match REGEX")
    parser.add_argument("--expect-number", action="append", default=[], nargs=3,
                        metavar=("REGEX", "LOW", "HIGH"),
                        help="REGEX's first group, read as a number, lies in [LOW, HIGH]")
    parser.add_argument("--expect-exit", type=int, default=0)
    parser.add_argument("--imports", action="append", default=[], metavar="SYMBOL",
                        help="the program imports SYMBOL (an undefined dynamic symbol)")
    parser.add_argument("--proxy-expect", action="append", default=[], metavar="REGEX",
                        help="a line of the proxy driver's log (SIMGPU_PROXY_LOG) must match")
    parser.add_argument("--proxy-reject", action="append", default=[], metavar="REGEX",
                        help="no line of the proxy driver's log may match")
    parser.add_argument("--skip-if-failed-and-proxy-log", nargs=2, metavar=("REGEX", "REASON"),
                        help="if the program fails and the proxy log matches REGEX, the failure "
                             "is a known limitation of the simulator: skip with REASON")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    return parser.parse_args()


def imported_symbols(program):
    readelf = os.environ.get("READELF", "readelf")
    listing = subprocess.run([readelf, "--dyn-syms", "-W", program], check=True,
                             capture_output=True, text=True).stdout
    imported = set()
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[0].rstrip(":").isdigit() and fields[6] == "UND":
            imported.add(fields[7].split("@")[0])
    return imported


def any_line_matches(pattern, text):
    return re.search(pattern, text, re.MULTILINE) is not None


def main():
    arguments = parse_arguments()
    if arguments.skip:
        print(f"SKIP: {arguments.skip}")
        return SKIP
    command = [part for part in arguments.command if part != "--"]
    if not command:
        print("no program given", file=sys.stderr)
        return 1
    failures = []

    if arguments.imports:
        imported = imported_symbols(command[0])
        failures += [f"{command[0]} does not import {name}"
                     for name in arguments.imports if name not in imported]

    environment = dict(os.environ)
    # A sanitized build (scripts/sanitize.sh): the program is not instrumented
    # but loads the instrumented simulator, whose runtime must load first.
    if os.environ.get("SANITIZER_PRELOAD"):
        environment["LD_PRELOAD"] = ":".join(
            filter(None, [os.environ["SANITIZER_PRELOAD"], os.environ.get("LD_PRELOAD")]))
    log_path = None
    if arguments.proxy_expect or arguments.proxy_reject or arguments.skip_if_failed_and_proxy_log:
        handle, log_path = tempfile.mkstemp(prefix="simgpu-proxy-", suffix=".log")
        os.close(handle)
        environment["SIMGPU_PROXY_LOG"] = log_path

    completed = subprocess.run(command, env=environment, capture_output=True, text=True,
                               timeout=120)
    sys.stdout.write(completed.stdout)
    sys.stderr.write(completed.stderr)
    if completed.returncode != arguments.expect_exit:
        failures.append(f"exit status {completed.returncode}, expected {arguments.expect_exit}")

    for pattern in arguments.expect:
        if not any_line_matches(pattern, completed.stdout):
            failures.append(f"no output line matches {pattern!r}")
    for pattern, low, high in arguments.expect_number:
        match = re.search(pattern, completed.stdout, re.MULTILINE)
        if match is None:
            failures.append(f"no output line matches {pattern!r}")
        elif not float(low) <= float(match.group(1)) <= float(high):
            failures.append(f"{match.group(0)!r}: {match.group(1)} not in [{low}, {high}]")

    log = ""
    if log_path is not None:
        with open(log_path, encoding="utf-8") as log_file:
            log = log_file.read()
        os.unlink(log_path)
        known_limitation = arguments.skip_if_failed_and_proxy_log
        if (known_limitation and completed.returncode != arguments.expect_exit
                and any_line_matches(known_limitation[0], log)):
            print(f"SKIP: {known_limitation[1]}")
            print("proxy driver log (calls):")
            print("\n".join(line for line in log.splitlines() if line.startswith("call ")))
            return SKIP
        for pattern in arguments.proxy_expect:
            if not any_line_matches(pattern, log):
                failures.append(f"proxy log has no line matching {pattern!r}")
        for pattern in arguments.proxy_reject:
            if any_line_matches(pattern, log):
                failures.append(f"proxy log has a line matching {pattern!r}")

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
