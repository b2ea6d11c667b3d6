"""Makes cudaMemset calls from the Python call chains whose frames the shim
must read on every CPython version (tests/e2e/stacks/python_stacks_test.cpp):
a method, __init__, a nested function, a lambda, a generator run by a
for loop and one run from C, a coroutine under asyncio, a call from C back
into Python, a thread, and functions with 1-, 2- and 4-byte characters in
their names; through ctypes.CDLL (the GIL released) and ctypes.PyDLL (held).

On the line of each call, expect() first writes down the interpreter's own
view of the stack (sys._getframe: file, qualified name - the bare name
before 3.11 - and line of every frame); the test compares the trace with
it. Sites are marked "@site:NAME" for the test to find their lines.

usage: python_chains.py LIBSIMTENSOR_EXT LIBPYTHON_CALLBACK EXPECTED_JSON
"""
import asyncio
import ctypes
import json
import os
import sys
import threading

EXPECTED = []


def expect(site):
    """The caller's stack as the interpreter sees it, innermost first."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        frames.append({'file': code.co_filename, 'function': getattr(code, 'co_qualname', code.co_name),
                       'line': frame.f_lineno})
        frame = frame.f_back
    EXPECTED.append({'site': site, 'frames': frames})


class Tensors:
    """One device buffer and the two ways into the extension."""

    def __init__(self, library):
        path = os.path.abspath(library)
        self.released = ctypes.CDLL(path, mode=os.RTLD_LOCAL)  # the GIL released around each call
        self.held = ctypes.PyDLL(path, mode=os.RTLD_LOCAL)     # the GIL held
        for ext in (self.released, self.held):
            ext.simtensor_zero.restype = ctypes.c_int
            ext.simtensor_zero.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.buffer = ctypes.c_void_p()
        self.nbytes = 256
        self.released.simtensor_empty.restype = ctypes.c_int
        if self.released.simtensor_empty(ctypes.byref(self.buffer), ctypes.c_size_t(self.nbytes)) != 0:
            raise SystemExit('error: cudaMalloc failed')


def check(error):
    if error != 0:
        raise SystemExit(f'error: cudaMemset failed ({error})')


class Model:
    def __init__(self, tensors):
        self.tensors = tensors
        expect('init'); check(tensors.released.simtensor_zero(tensors.buffer, tensors.nbytes))  # @site:init

    def forward(self):
        t = self.tensors
        expect('method'); check(t.held.simtensor_zero(t.buffer, t.nbytes))  # @site:method


def chunks(t):
    for _ in range(1):
        expect('generator'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:generator
        yield 1


def chunks_from_c(t):
    expect('generator_from_c'); check(t.held.simtensor_zero(t.buffer, t.nbytes))  # @site:generator_from_c
    yield 1


async def step_async(t):
    await asyncio.sleep(0)
    expect('coroutine'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:coroutine


def größe(t):
    expect('latin1_name'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:latin1_name


def 计算(t):
    expect('bmp_name'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:bmp_name


def 𠀀(t):
    expect('astral_name'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:astral_name


def through_c(t, callback_library):
    callbacks = ctypes.CDLL(os.path.abspath(callback_library))
    callback_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)

    def called_back(value):
        expect('callback'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:callback
        return value + 1

    callbacks.stacks_call_back.restype = ctypes.c_int
    callbacks.stacks_call_back.argtypes = [callback_type, ctypes.c_int]
    if callbacks.stacks_call_back(callback_type(called_back), 41) != 42:  # @site:call_into_c
        raise SystemExit('error: the callback did not run')


def main():
    t = TENSORS
    Model(t).forward()  # @site:main_model

    def step():
        expect('nested'); check(t.released.simtensor_zero(t.buffer, t.nbytes))  # @site:nested

    step()
    run = lambda: (expect('lambda'), check(t.held.simtensor_zero(t.buffer, t.nbytes)))  # @site:lambda
    run()
    for _ in chunks(t):
        pass
    list(chunks_from_c(t))
    asyncio.run(step_async(t))
    größe(t)
    计算(t)
    𠀀(t)
    through_c(t, sys.argv[2])
    in_thread = lambda: (expect('thread'), check(t.released.simtensor_zero(t.buffer, t.nbytes)))  # @site:thread
    worker = threading.Thread(target=in_thread, name='worker')
    worker.start()
    worker.join()
    with open(sys.argv[3], 'w', encoding='utf-8') as out:
        json.dump(EXPECTED, out, ensure_ascii=False)
    print(f'python_chains: {len(EXPECTED)} calls')
    return 0


TENSORS = Tensors(sys.argv[1])
expect('module'); check(TENSORS.released.simtensor_zero(TENSORS.buffer, TENSORS.nbytes))  # @site:module

if __name__ == '__main__':
    sys.exit(main())
