#!/usr/bin/env python3
"""Runs one target program on the simulated GPU stack and checks how it ended.

usage: run_program_test.py [checks] -- PROGRAM [ARGS...]

  --expect-exit N         the program must exit with status N (default 0)
  --expect-signal NAME    the program must die from signal NAME (SEGV, ABRT, KILL...)
  --expect-stdout REGEX   stdout must contain a match (repeatable)
  --kill-at REGEX         send --kill-signal as soon as a stdout line matches
  --kill-signal NAME      signal for --kill-at (default KILL)
  --timeout SECONDS       fail if the program runs longer (default 60)
  --expect-no-driver      the program must not load libcuda.so.1 at all

Every run also proves that the simulated stack was used: with LD_DEBUG the
dynamic loader reports each object it initializes, in every process of the
run (forked and exec'd children included). The run fails if any CUDA or
NVIDIA library was loaded from outside the directories on LD_LIBRARY_PATH
(the real libcudart.so.13 is in the ldconfig cache on these machines), or if
no libcuda.so.1 was loaded at all.
"""
import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading

NVIDIA_LIBRARY = re.compile(r'^lib(cuda|cudart|cublas|cublasLt|cudnn\w*|nccl|cupti|nvidia-\w+|nvrtc|nvJitLink)\.so')


def signal_number(name: str) -> int:
    name = name.upper()
    return int(getattr(signal, name if name.startswith('SIG') else 'SIG' + name))


def loaded_objects(debug_dir: str) -> list:
    """Paths of every object the loader initialized, over all processes."""
    paths = []
    for entry in sorted(os.listdir(debug_dir)):
        with open(os.path.join(debug_dir, entry), errors='replace') as log:
            for line in log:
                match = re.search(r'calling init: (\S+)', line)
                if match:
                    paths.append(match.group(1))
    return paths


def check_libraries(paths: list, allowed_dirs: list, expect_driver: bool) -> list:
    problems = []
    allowed = [os.path.realpath(d) for d in allowed_dirs if d]
    driver_loaded = False
    for path in paths:
        name = os.path.basename(path)
        if not NVIDIA_LIBRARY.match(name):
            continue
        directory = os.path.dirname(os.path.realpath(path))
        if directory not in allowed:
            problems.append(f'{path} was loaded from outside the simulated stack {allowed}')
        if name.startswith('libcuda.so'):
            driver_loaded = True
    if expect_driver and not driver_loaded:
        problems.append('libcuda.so.1 was never loaded: the program did not reach the driver')
    if not expect_driver and driver_loaded:
        problems.append('libcuda.so.1 was loaded although --expect-no-driver was given')
    return problems


def run(args, command, debug_dir):
    env = dict(os.environ)
    env['LD_DEBUG'] = 'libs'
    env['LD_DEBUG_OUTPUT'] = os.path.join(debug_dir, 'ld')
    # A sanitized build (scripts/sanitize.sh): an uninstrumented program (Python)
    # loading the instrumented simulator needs the sanitizer runtime first.
    if os.environ.get('SANITIZER_PRELOAD'):
        env['LD_PRELOAD'] = ':'.join(filter(None, [os.environ['SANITIZER_PRELOAD'], os.environ.get('LD_PRELOAD')]))

    def no_core_dumps():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=env, text=True,
                               preexec_fn=no_core_dumps)
    timed_out = threading.Event()

    def kill_on_timeout():
        timed_out.set()
        process.kill()

    timer = threading.Timer(args.timeout, kill_on_timeout)
    timer.start()
    stdout_lines = []
    killed = False
    try:
        for line in process.stdout:
            stdout_lines.append(line)
            sys.stdout.write(line)
            if args.kill_at and not killed and re.search(args.kill_at, line):
                process.send_signal(signal_number(args.kill_signal))
                killed = True
        returncode = process.wait()
    finally:
        timer.cancel()
    return ''.join(stdout_lines), returncode, killed, timed_out.is_set()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--expect-exit', type=int, default=None)
    parser.add_argument('--expect-signal')
    parser.add_argument('--expect-stdout', action='append', default=[])
    parser.add_argument('--kill-at')
    parser.add_argument('--kill-signal', default='KILL')
    parser.add_argument('--timeout', type=float, default=60.0)
    parser.add_argument('--expect-no-driver', action='store_true')
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not command:
        parser.error('no program given')

    with tempfile.TemporaryDirectory(prefix='simgpu-run-') as debug_dir:
        stdout, returncode, killed, timed_out = run(args, command, debug_dir)
        problems = check_libraries(loaded_objects(debug_dir),
                                   os.environ.get('LD_LIBRARY_PATH', '').split(':'),
                                   expect_driver=not args.expect_no_driver)

    if args.expect_signal:
        expected = signal_number(args.expect_signal)
        if returncode != -expected:
            problems.append(f'expected death by signal {expected}, got return code {returncode}')
    else:
        expected_exit = 0 if args.expect_exit is None else args.expect_exit
        if returncode != expected_exit:
            problems.append(f'expected exit status {expected_exit}, got return code {returncode}')
    if args.kill_at and not killed:
        problems.append(f'no stdout line matched --kill-at {args.kill_at!r}')
    for pattern in args.expect_stdout:
        if not re.search(pattern, stdout, re.MULTILINE):
            problems.append(f'stdout has no match for {pattern!r}')
    if timed_out:
        problems.append(f'killed after the {args.timeout} s timeout')

    for problem in problems:
        print(f'FAIL: {problem}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
