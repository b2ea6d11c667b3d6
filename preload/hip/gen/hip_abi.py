"""What the HIP headers declare, read by the compiler itself.

The HIP runtime's C API (hip_runtime_api.h, hip_ext.h) and the compiler ABI
(preload/hip/hip_private_abi.h) are parsed by clang (-ast-dump=json), so every
declaration comes back exactly as a compiler sees it: its return type, its
parameters with their names, and its linkage name (libamdhip64 5.2 exports a
few functions with C++ linkage, e.g. hipExtModuleLaunchKernel).

Also reads the export list of libamdhip64 (symbol, version node), as written
by tests/simgpu/hip/gen/gen_hip_exports.py from the real library.
"""
import json
import subprocess
import tempfile


class Function:
    def __init__(self, name, symbol, result, params, param_names):
        self.name = name            # the C name: hipExtModuleLaunchKernel
        self.symbol = symbol        # the linkage name: mangled for C++ linkage
        self.result = result        # 'hipError_t'
        self.params = params        # ['hipFunction_t f', ...]: declarations with names
        self.param_names = param_names

    @property
    def c_linkage(self):
        return self.symbol == self.name


def _objects(text):
    decoder, i, out = json.JSONDecoder(), 0, []
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = decoder.raw_decode(text, i)
        out.append(obj)
    return out


def _declare(type_text, name):
    """'int (*)(void *)' style types never appear in the HIP C API's
    parameters except as function pointers, which clang spells with (*)."""
    if '(*)' in type_text:
        return type_text.replace('(*)', f'(*{name})', 1)
    if type_text.endswith('*') or type_text.endswith('&'):
        return f'{type_text}{name}'
    if '[' in type_text:
        base, _, dims = type_text.partition('[')
        return f'{base.strip()} {name}[{dims}'
    return f'{type_text} {name}'


def functions(clang, include_dirs, headers, defines=('__HIP_PLATFORM_AMD__',)):
    """linkage name -> Function for every non-inline, non-static function
    named hip* or __hip* that the headers declare."""
    with tempfile.NamedTemporaryFile('w', suffix='.cpp') as source:
        for header in headers:
            source.write(f'#include "{header}"\n')
        source.flush()
        command = [clang, '-x', 'c++', '-std=c++17', '-fsyntax-only', '-Xclang', '-ast-dump=json',
                   '-Xclang', '-ast-dump-filter=hip']
        command += [f'-D{d}' for d in defines] + [f'-I{d}' for d in include_dirs] + [source.name]
        text = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    found = {}
    for obj in _objects(text):
        if obj.get('kind') != 'FunctionDecl':
            continue
        name = obj['name']
        if not (name.startswith('hip') or name.startswith('__hip')):
            continue
        if obj.get('inline') or obj.get('storageClass') == 'static' or obj.get('isImplicit'):
            continue
        if any(inner.get('kind') == 'TemplateArgument' for inner in obj.get('inner', [])):
            continue
        qual = obj['type']['qualType']
        result = qual[:qual.index('(')].strip()
        params, names = [], []
        for index, inner in enumerate(p for p in obj.get('inner', []) if p['kind'] == 'ParmVarDecl'):
            pname = inner.get('name') or f'arg{index}'
            params.append(_declare(inner['type']['qualType'], pname))
            names.append(pname)
        symbol = obj.get('mangledName', name)
        found.setdefault(symbol, Function(name, symbol, result, params, names))
    return found


def read_exports(path):
    """[(symbol, version node)] in file order."""
    exports = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                symbol, version = line.split()
                exports.append((symbol, version))
    return exports


# The headers that declare libamdhip64's API (hip_private_abi.h includes
# hip_runtime_api.h and hip_ext.h through hip_headers.h).
HEADERS = ('preload/hip/hip_private_abi.h', 'hip/hiprtc.h')
