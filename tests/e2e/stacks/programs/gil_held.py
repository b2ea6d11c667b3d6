#!/usr/bin/python3
"""Calls the ctypes extension with the GIL HELD (ctypes.PyDLL, the way a C
extension module calls CUDA), from a method of a class and a nested function,
so the call stack tests see Python frames taken while the GIL is held. The
tests find the lines by their "@site:" markers.

usage: gil_held.py PATH/TO/libsimtensor_ext.so
"""
import ctypes
import os
import sys


class Model:
    def __init__(self, ext):
        self.ext = ext

    def forward(self, buffer, nbytes):
        return self.ext.simtensor_zero(buffer, nbytes)  # @site:forward


def main() -> int:
    ext = ctypes.PyDLL(os.path.abspath(sys.argv[1]), mode=os.RTLD_LOCAL)
    for name in ('simtensor_empty', 'simtensor_zero', 'simtensor_free'):
        getattr(ext, name).restype = ctypes.c_int
    buffer = ctypes.c_void_p()
    nbytes = ctypes.c_size_t(1024)
    if ext.simtensor_empty(ctypes.byref(buffer), nbytes) != 0:
        raise SystemExit('error: cudaMalloc failed')

    def step():
        return Model(ext).forward(buffer, nbytes)  # @site:step

    if step() != 0:  # @site:main_step
        raise SystemExit('error: cudaMemset failed')
    ext.simtensor_free(buffer)
    print('gil_held: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())  # @site:module
