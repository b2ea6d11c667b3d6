#!/usr/bin/python3
"""A training loop whose data loader cannot keep up, on purpose.

A loader thread reads each batch (time.sleep stands for the disk or the
network), decodes it in Python (json.loads and a pure-Python loop) and puts it
on a queue.Queue; the main thread takes each batch with queue.get, uploads it
and launches a kernel through libsimtensor_ext.so (ctypes, as PyTorch loads
its extensions). The GPU waits for the loader in every step: the launching
thread spends the gap blocked in queue.get, the loader thread in its read and
its decode.

usage: slow_loader.py PATH/TO/libsimtensor_ext.so [--steps N] [--read-ms MS]
                      [--decode-ms MS]
Prints one summary line and exits 0 when every step ran; the shares of the
loader's time are set by --read-ms and --decode-ms (the test knows them).
"""
import argparse
import ctypes
import json
import os
import queue
import sys
import threading
import time

ELEMENTS = 4096


def read_batch(read_ms: float) -> str:
    time.sleep(read_ms / 1000.0)  # the read: the loader blocks here
    return json.dumps([[i * 0.5, i] for i in range(512)])


def decode_batch(text: str, decode_ms: float) -> list:
    values = json.loads(text)  # the decode: the loader computes here
    deadline = time.thread_time() + decode_ms / 1000.0
    checksum = 0.0
    while time.thread_time() < deadline:
        for pair in values:
            checksum += pair[0] * pair[1]
    return [float(pair[0]) for pair in values[:ELEMENTS]] + [checksum]


def loader(batches: queue.Queue, steps: int, read_ms: float, decode_ms: float) -> None:
    for _ in range(steps):
        text = read_batch(read_ms)
        batches.put(decode_batch(text, decode_ms))
    batches.put(None)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('library')
    parser.add_argument('--steps', type=int, default=40)
    parser.add_argument('--read-ms', type=float, default=6.0)
    parser.add_argument('--decode-ms', type=float, default=4.0)
    args = parser.parse_args()

    ext = ctypes.CDLL(os.path.abspath(args.library), mode=os.RTLD_LOCAL)
    if not hasattr(ext, 'simtensor_fill'):
        print('slow_loader: libsimtensor_ext has no kernel (built without nvcc)', file=sys.stderr)
        return 77
    ext.simtensor_fill.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_float]
    device = ctypes.c_void_p()
    nbytes = ctypes.c_size_t(ELEMENTS * 4)
    if ext.simtensor_empty(ctypes.byref(device), nbytes) != 0:
        raise SystemExit('error: cudaMalloc failed')

    batches: queue.Queue = queue.Queue(maxsize=2)
    thread = threading.Thread(target=loader, name='loader',
                              args=(batches, args.steps, args.read_ms, args.decode_ms))
    thread.start()
    host = (ctypes.c_float * ELEMENTS)()
    steps = 0
    while True:
        batch = batches.get()  # the launching thread waits for the loader here
        if batch is None:
            break
        host[0] = batch[0]
        if ext.simtensor_upload(device, host, nbytes) != 0:
            raise SystemExit('error: upload failed')
        if ext.simtensor_fill(device, ELEMENTS, float(steps)) != 0:
            raise SystemExit('error: kernel launch failed')
        if ext.simtensor_synchronize() != 0:
            raise SystemExit('error: synchronize failed')
        steps += 1
    thread.join()
    ext.simtensor_free(device)
    print(f'slow_loader: steps={steps} ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
