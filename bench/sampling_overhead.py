#!/usr/bin/env python3
"""What 1 kHz CPU sampling costs a busy program (figure u).

    sampling_overhead.py PROFLAUNCH [--python PYTHON] [--runs 7]

Runs a fixed amount of Python work (a loop of small function calls on two
threads) under proflaunch with --cpu-sampling=off and =1000, alternating, and
prints one JSON object: the median CPU time of the process (every thread of
it, the shim's writer included, as time.process_time() reads it at the end)
of each, and the difference in percent. The work is fixed, not the time, so everything the
sampler costs shows up as CPU time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORK = r'''
import threading
def inner(n):
    t = 0
    for i in range(n):
        t += i * i % 7
    return t
def work():
    for _ in range(6000):
        inner(2000)
ts = [threading.Thread(target=work) for _ in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
import time
print(time.process_time())
'''


def cpu_seconds(command):
    # The program's own CPU time, every thread of it (the shim's writer
    # included), read by the program at its end: what the launcher does after
    # the run (joining parts, symbolizing) is not the program's cost.
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return float(done.stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('proflaunch')
    parser.add_argument('--python', default=sys.executable)
    parser.add_argument('--runs', type=int, default=7)
    args = parser.parse_args()
    times = {'off': [], '1000': []}
    samples = {}
    with tempfile.TemporaryDirectory() as out:
        for run in range(args.runs):
            for setting in ('off', '1000'):
                trace = os.path.join(out, f'{setting}-{run}.trace')
                times[setting].append(cpu_seconds([args.proflaunch, '-q', f'--cpu-sampling={setting}', '-o', trace,
                                                   '--', args.python, '-c', WORK]))
    off, on = statistics.median(times['off']), statistics.median(times['1000'])
    print(json.dumps({'python': args.python, 'runs': args.runs, 'cpu_s_off': round(off, 4), 'cpu_s_1khz': round(on, 4),
                      'overhead_percent': round(100 * (on - off) / off, 2),
                      'all_off': [round(t, 3) for t in times['off']], 'all_1khz': [round(t, 3) for t in times['1000']]}))


if __name__ == '__main__':
    main()
