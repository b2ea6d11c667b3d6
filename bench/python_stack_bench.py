#!/usr/bin/env python3
"""What a Python call stack costs the traced thread (figure g).

    python_stack_bench.py LIBBENCH_PYTHON_STACKS.so [--depth 20] [--iterations 20000]

Calls into the shim's stacks (python_stacks_lib.cpp) from a Python call chain
DEPTH frames deep, with the GIL released (ctypes.CDLL, as ctypes and torch
ops run) and held (ctypes.PyDLL, as a C extension runs), and prints one JSON
object: ns per captured Python stack (walk + lookup of a known stack), per
native stack, and per whole attach_stacks (both stacks and the record).
"""
import argparse
import ctypes
import json
import statistics
import sys
import tempfile


def at_depth(depth, body):
    if depth <= 1:
        return body()
    return at_depth(depth - 1, body)


def measure(library, depth, iterations, what, repetitions=7):
    library.bench_stacks_ns.restype = ctypes.c_double
    library.bench_stacks_ns.argtypes = [ctypes.c_int, ctypes.c_int]
    samples = [at_depth(depth, lambda: library.bench_stacks_ns(iterations, what)) for _ in range(repetitions)]
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('library')
    parser.add_argument('--depth', type=int, default=20)
    parser.add_argument('--iterations', type=int, default=20000)
    args = parser.parse_args()
    if not (3, 9) <= sys.version_info[:2] <= (3, 13):
        raise SystemExit(f'python_stack_bench: Python frames are read for CPython 3.9 to 3.13, this is {sys.version}')

    with tempfile.TemporaryDirectory() as parts:
        released = ctypes.CDLL(args.library)  # the GIL is released around each call
        held = ctypes.PyDLL(args.library)     # the GIL stays held
        if released.bench_stacks_start(parts.encode()) != 0:
            raise SystemExit('python_stack_bench: the shim did not start recording')
        frames = at_depth(args.depth, released.bench_python_frames)
        if frames < args.depth:
            raise SystemExit(f'python_stack_bench: {frames} Python frames seen from a {args.depth}-deep call chain')
        result = {'python': sys.version.split()[0], 'python_frames': frames}
        for name, library in (('gil_released', released), ('gil_held', held)):
            result[name] = {
                'python_ns': measure(library, args.depth, args.iterations, 1),
                'native_ns': measure(library, args.depth, args.iterations, 2),
                'attach_stacks_ns': measure(library, args.depth, args.iterations, 0),
            }
        # Figure s: one CPU sample (the signal handler) with 32 native and
        # DEPTH Python frames, the stack repeating.
        released.bench_sample_handler_ns.restype = ctypes.c_double
        released.bench_sample_handler_ns.argtypes = [ctypes.c_int, ctypes.c_int]
        held.bench_sample_handler_ns.restype = ctypes.c_double
        held.bench_sample_handler_ns.argtypes = [ctypes.c_int, ctypes.c_int]
        at_depth(args.depth, lambda: released.bench_sample_handler_ns(10, 32))
        result['cpu_sample'] = {
            'native_frames': at_depth(args.depth, lambda: released.bench_sample_frames(0)),
            'python_frames': at_depth(args.depth, lambda: released.bench_sample_frames(1)),
            'handler_ns': statistics.median(
                [at_depth(args.depth, lambda: held.bench_sample_handler_ns(args.iterations, 32)) for _ in range(7)]),
        }
        released.bench_stacks_finish()
    print(json.dumps(result))


if __name__ == '__main__':
    main()
