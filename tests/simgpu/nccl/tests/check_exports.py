#!/usr/bin/env python3
"""Checks the simulated libnccl.so.2's exports against the real library's
shape: every API the simulator implements is a weak ncclX over a strong
pncclX, nothing is versioned, and nothing else leaves the library. When the
real libnccl.so.2 is given, every implemented name must exist there too.

usage: check_exports.py NM SIMULATED_LIB [REAL_LIB]
"""
import subprocess
import sys

IMPLEMENTED = """GetVersion GetUniqueId CommInitRank CommInitRankConfig CommInitAll CommSplit
CommFinalize CommDestroy CommAbort CommCount CommUserRank CommCuDevice CommGetAsyncError
GetErrorString GetLastError GroupStart GroupEnd AllReduce Broadcast Bcast Reduce AllGather
ReduceScatter AlltoAll Gather Scatter Send Recv""".split()


def exports(nm, library):
    out = subprocess.run([nm, '-D', '--defined-only', library], check=True, capture_output=True,
                         text=True).stdout
    result = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            result[parts[2]] = parts[1]
    return result


def main():
    nm, simulated, *real = sys.argv[1:]
    ours = exports(nm, simulated)
    problems = []
    for api in IMPLEMENTED:
        weak, strong = 'nccl' + api, 'pnccl' + api
        if ours.get(weak) != 'W':
            problems.append(f'{weak} is {ours.get(weak, "missing")}, expected W (weak)')
        if ours.get(strong) != 'T':
            problems.append(f'{strong} is {ours.get(strong, "missing")}, expected T (strong)')
    expected = {p + 'nccl' + api for api in IMPLEMENTED for p in ('', 'p')}
    surplus = sorted(name for name in ours if name not in expected)
    if surplus:
        problems.append(f'unexpected exports: {surplus}')
    versioned = sorted(name for name in ours if '@' in name)
    if versioned:
        problems.append(f'versioned symbols: {versioned}')
    if real:
        theirs = exports(nm, real[0])
        problems += [f'{name} is not exported by {real[0]}' for name in sorted(expected) if name not in theirs]
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f'{len(ours)} exports: weak ncclX over strong pncclX for {len(IMPLEMENTED)} APIs')
    return 0


if __name__ == '__main__':
    sys.exit(main())
