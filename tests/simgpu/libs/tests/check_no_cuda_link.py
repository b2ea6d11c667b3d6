#!/usr/bin/env python3
"""Checks that shared libraries reach CUDA only at run time, like cuBLAS:
no DT_NEEDED entry for libcuda or libcudart and no undefined cu*/cuda*
symbol (which a direct call into either library would leave behind).

usage: check_no_cuda_link.py READELF LIBRARY...
"""
import re
import subprocess
import sys


def needed_libraries(readelf: str, library: str) -> list:
    output = subprocess.run([readelf, '--dynamic', '--wide', library], check=True,
                            capture_output=True, text=True).stdout
    return re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', output)


def undefined_symbols(readelf: str, library: str) -> list:
    output = subprocess.run([readelf, '--dyn-syms', '--wide', library], check=True,
                            capture_output=True, text=True).stdout
    symbols = []
    for line in output.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) >= 8 and fields[6] == 'UND':
            symbols.append(fields[7].split('@')[0])
    return symbols


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    readelf, libraries = sys.argv[1], sys.argv[2:]
    problems = []
    for library in libraries:
        needed = needed_libraries(readelf, library)
        if 'libc.so.6' not in needed:
            problems.append(f'{library}: could not read its dynamic section ({needed})')
        for name in needed:
            if re.match(r'lib(cuda|cudart)\b', name):
                problems.append(f'{library}: links {name}')
        for symbol in undefined_symbols(readelf, library):
            if re.match(r'cu[A-Z]|cuda[A-Z]|__cuda', symbol):
                problems.append(f'{library}: imports {symbol}')
        if 'dlopen' not in undefined_symbols(readelf, library):
            problems.append(f'{library}: does not import dlopen, so it cannot load the driver')
    for problem in problems:
        print(f'FAIL: {problem}', file=sys.stderr)
    if not problems:
        print(f'ok: {len(libraries)} libraries reach CUDA only through dlopen')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
