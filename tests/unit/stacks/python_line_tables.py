"""Prints what python_interpreter_test.cpp checks the shim's view of this
interpreter against: the sizes its type objects give code (and frame)
objects, and for every instruction of many code objects - this file's
samples and some of the interpreter's own library - the line the
interpreter itself gives it (PyCode_Addr2Line, called through ctypes),
with the raw line table the shim decodes.

usage: python_line_tables.py     (run by the interpreter under test)

Output, one item a line:
    version MAJOR MINOR
    basicsize code N
    basicsize frame N
    code NAME FIRST_LINE TABLE_HEX     (then)
    lines L0 L1 ...                    (the line of each 2-byte code unit; -1 none)
"""
import ctypes
import importlib
import sys
import types

# Line tables of every shape: a gap of more than 255 lines, a line of more
# than 255 bytes of code, lines that go backwards, no-line regions.
SAMPLES = '''
def far_apart(a):
    b = a + 1
''' + '\n' * 300 + '''
    return (b +
            a)


def long_line(y):
    return [''' + ', '.join('y' for _ in range(300)) + ''']


def backwards(f, a, b):
    for item in range(3):
        f(
            a,
            b,
        )
    try:
        return f(a)
    except ValueError:
        pass
    finally:
        a = None
    with open(__file__) as handle:
        return [x for x in handle if x]


class Holder:
    def method(self):
        return lambda: (yield self)
'''

MODULES = ['argparse', 'threading', 'json.decoder', 'dis', 'collections']


def code_objects(code):
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from code_objects(constant)


def line_table(code):
    return code.co_lnotab if sys.version_info < (3, 10) else code.co_linetable


def main():
    addr2line = ctypes.pythonapi.PyCode_Addr2Line
    addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
    addr2line.restype = ctypes.c_int
    print('version', *sys.version_info[:2])
    print('basicsize code', types.CodeType.__basicsize__)
    print('basicsize frame', types.FrameType.__basicsize__)
    sources = [('samples', SAMPLES)]
    for name in MODULES:
        module = importlib.import_module(name)
        with open(module.__file__, encoding='utf-8') as source:
            sources.append((module.__file__, source.read()))
    for filename, text in sources:
        for code in code_objects(compile(text, filename, 'exec')):
            units = len(code.co_code) // 2
            print('code', code.co_name, code.co_firstlineno, line_table(code).hex() or '-')
            print('lines', *(addr2line(code, 2 * unit) for unit in range(units)))


if __name__ == '__main__':
    main()
