#!/usr/bin/env python3
"""Finds the CPython interpreters (and their headers) that the Python stack
tests run against: tests/unit/stacks (layouts, line tables) and
tests/e2e/stacks (python stacks). Run by meson at configure time.

usage: find_cpython.py 3.9 3.10 ... system

Prints one line per argument: "VERSION<tab>INTERPRETER<tab>INCLUDE_DIR", "-" for
what was not found. A version X.Y is looked for under $PYENV_ROOT/versions
and ~/.pyenv/versions (its newest release there), then as pythonX.Y on PATH;
"system" is Debian's /usr/bin/python3. The include directory is the one the
interpreter names (sysconfig INCLUDEPY), kept only when it holds the
headers the layout tests compile against. Nothing found is not an error:
those tests then report SKIP.
"""
import os
import re
import shutil
import subprocess
import sys


def release_key(name):
    return tuple(int(part) for part in re.findall(r'\d+', name))


def pyenv_candidates(version):
    roots = [os.environ.get('PYENV_ROOT'), os.path.join(os.path.expanduser('~'), '.pyenv')]
    seen = set()
    for root in roots:
        if not root or root in seen:
            continue
        seen.add(root)
        versions = os.path.join(root, 'versions')
        try:
            names = os.listdir(versions)
        except OSError:
            continue
        # 3.12.1, not 3.12.1t (free-threaded) nor 3.12-dev or a virtualenv.
        releases = [n for n in names if re.fullmatch(re.escape(version) + r'\.\d+', n)]
        for name in sorted(releases, key=release_key, reverse=True):
            yield os.path.join(versions, name, 'bin', 'python' + version)


def interpreter_for(version):
    if version == 'system':
        candidates = ['/usr/bin/python3']
    else:
        candidates = list(pyenv_candidates(version))
        on_path = shutil.which('python' + version)
        if on_path and '/shims/' not in on_path:  # a pyenv shim may name a version not installed
            candidates.append(on_path)
    for path in candidates:
        if os.access(path, os.X_OK):
            return path
    return None


def describe(interpreter):
    """(version, include dir) as the interpreter says, or None."""
    query = ("import sys, sysconfig; "
             "print('%d.%d' % sys.version_info[:2]); print(sysconfig.get_config_var('INCLUDEPY') or '')")
    try:
        out = subprocess.run([interpreter, '-I', '-c', query], capture_output=True, text=True, timeout=60,
                             check=True).stdout.split('\n')
    except (OSError, subprocess.SubprocessError):
        return None
    return out[0].strip(), out[1].strip()


def has_layout_headers(include, version):
    needed = ['Python.h']
    needed.append('internal/pycore_frame.h' if release_key(version) >= (3, 11) else 'frameobject.h')
    return all(os.path.isfile(os.path.join(include, name)) for name in needed)


def main():
    for wanted in sys.argv[1:]:
        interpreter = interpreter_for(wanted)
        include = None
        if interpreter:
            described = describe(interpreter)
            if described is None or (wanted != 'system' and described[0] != wanted):
                interpreter = None
            elif described[1] and has_layout_headers(described[1], described[0]):
                include = described[1]
        print(wanted, interpreter or '-', include or '-', sep='\t')


if __name__ == '__main__':
    main()
