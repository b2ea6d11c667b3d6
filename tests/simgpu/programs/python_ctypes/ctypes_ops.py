#!/usr/bin/python3
"""Loads libsimtensor_ext.so the way PyTorch loads its extension modules
(ctypes.CDLL with RTLD_LOCAL) and runs a few tensor "ops" through it; the
library calls the CUDA runtime from inside itself.

usage: ctypes_ops.py PATH/TO/libsimtensor_ext.so [--elements N]
Exits 0 and prints one summary line if every op behaved; 1 otherwise.
"""
import argparse
import ctypes
import os
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('library')
    parser.add_argument('--elements', type=int, default=4096)
    args = parser.parse_args()

    ext = ctypes.CDLL(os.path.abspath(args.library), mode=os.RTLD_LOCAL)
    ext.simtensor_error_name.restype = ctypes.c_char_p
    for name in ('simtensor_empty', 'simtensor_free', 'simtensor_upload', 'simtensor_download',
                 'simtensor_copy', 'simtensor_zero'):
        getattr(ext, name).restype = ctypes.c_int

    def check(error: int, what: str) -> None:
        if error != 0:
            raise SystemExit(f'error: {what} failed: {ext.simtensor_error_name(error).decode()}')

    count = ctypes.c_int(0)
    check(ext.simtensor_device_count(ctypes.byref(count)), 'cudaGetDeviceCount')
    if count.value < 1:
        raise SystemExit('error: no CUDA device')

    n = args.elements
    nbytes = ctypes.c_size_t(n * 4)
    source = (ctypes.c_float * n)(*[float(i) * 0.5 for i in range(n)])
    result = (ctypes.c_float * n)()
    a, b = ctypes.c_void_p(), ctypes.c_void_p()
    check(ext.simtensor_empty(ctypes.byref(a), nbytes), 'cudaMalloc')
    check(ext.simtensor_empty(ctypes.byref(b), nbytes), 'cudaMalloc')
    ops = 2

    # tensor.cuda() then b.copy_(a) then b.cpu(): the data must survive.
    check(ext.simtensor_upload(a, source, nbytes), 'H2D copy')
    check(ext.simtensor_copy(b, a, nbytes), 'D2D copy')
    check(ext.simtensor_download(result, b, nbytes), 'D2H copy')
    ops += 3
    if list(result) != list(source):
        raise SystemExit('error: copy round trip changed the data')

    # b.zero_() through cudaMemset.
    check(ext.simtensor_zero(b, nbytes), 'cudaMemset')
    check(ext.simtensor_download(result, b, nbytes), 'D2H copy')
    ops += 2
    if any(value != 0.0 for value in result):
        raise SystemExit('error: cudaMemset did not zero the tensor')

    # a.fill_(2.0): a <<<>>> kernel launched from inside the library, when it
    # was built with nvcc. Kernels do not execute on the simulator, so only
    # the launch and the synchronization are checked.
    kernel = 'skipped (built without nvcc)'
    if hasattr(ext, 'simtensor_fill'):
        ext.simtensor_fill.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_float]
        check(ext.simtensor_fill(a, n, 2.0), 'fill kernel launch')
        check(ext.simtensor_synchronize(), 'cudaDeviceSynchronize')
        ops += 2
        kernel = 'launched'

    check(ext.simtensor_free(a), 'cudaFree')
    check(ext.simtensor_free(b), 'cudaFree')
    ops += 2
    print(f'ctypes_ops: ops={ops} kernel={kernel} ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
