#!/usr/bin/env python3
"""Checks that the simulated libcuda.so.1 exports exactly the toolkit stub's
names plus the documented extensions.

usage: check_exports.py NM SIMULATED_LIB STUB_LIB [EXTRA_NAME...]
"""
import subprocess
import sys


def defined_dynamic_symbols(nm, library):
    out = subprocess.run([nm, '-D', '--defined-only', library], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def main():
    nm, simulated, stub, *extra = sys.argv[1:]
    ours = defined_dynamic_symbols(nm, simulated)
    expected = defined_dynamic_symbols(nm, stub) | set(extra)
    missing, surplus = sorted(expected - ours), sorted(ours - expected)
    if missing:
        print(f'missing from {simulated}: {missing}')
    if surplus:
        print(f'exported by {simulated} but not by the stub: {surplus}')
    if missing or surplus:
        return 1
    print(f'{len(ours)} exports match {stub} plus {extra}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
