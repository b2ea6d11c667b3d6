#!/usr/bin/env python3
"""Runs the capture probe (tests/gpu/capture_probe.cu) and compares which of
its probes broke the capture with a run recorded on real hardware.

usage: compare_capture_probe.py EXPECTED PROGRAM [ARGS...]

EXPECTED holds the probe's output from a real GPU (capture_probe.h200.txt:
an H200, driver 580.159.04). The return codes of the probed calls are left
out of the comparison (an event query's answer depends on timing); which
call, from which thread, in which mode, and whether the capture survived
must be the same line for line. On the simulated driver this checks that
it refuses and invalidates exactly what NVIDIA's driver did.
"""
import re
import subprocess
import sys

CODE = re.compile(r' probe=-?\d+')


def verdicts(text: str) -> list:
    return [CODE.sub('', line).rstrip() for line in text.splitlines() if line.startswith('capture_probe:')]


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding='utf-8') as f:
        expected = verdicts(f.read())
    run = subprocess.run(sys.argv[2:], capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        print(f'the probe exited with {run.returncode}:\n{run.stdout}{run.stderr}')
        return 1
    got = verdicts(run.stdout)
    if not expected:
        print('no expected lines')
        return 1
    if got == expected:
        print(f'{len(got)} probes: the same verdicts as on the real GPU')
        return 0
    print('the verdicts differ from the real GPU\'s (expected, then got):')
    for i in range(max(len(got), len(expected))):
        e = expected[i] if i < len(expected) else '(none)'
        g = got[i] if i < len(got) else '(none)'
        if e != g:
            print(f'  - {e}\n  + {g}')
    return 1


if __name__ == '__main__':
    sys.exit(main())
