"""What the CUDA toolkit's own headers say about the driver's and the runtime's
exported entry points. Facts read from the headers, nothing invented.

Driver: cudaTypedefs.h / cudaProfilerTypedefs.h name every driver ABI variant
as PFN_<name>_v<cudaVersion>[_ptsz|_ptds] with its exact parameter list.
Within one <name>, the plain variants sorted by version are the symbols <name>,
<name>_v2, <name>_v3, ...; a _ptsz/_ptds variant of version V is the symbol of
the newest plain variant not newer than V, plus the suffix. (This reproduces
exactly the 637 names the toolkit's stub libcuda.so exports.)

Runtime: cuda_runtime_api.h (and the profiler and graphics-interop headers)
declare every public runtime function; the __CUDART_API_PTDS/_PTSZ macro
table at its top names the per-thread-default-stream variants, which take the
same parameters under the symbol <name>_ptds or <name>_ptsz.
"""
import collections
import re

PFN_RE = re.compile(
    r'typedef\s+CUresult\s*\(\s*CUDAAPI\s+\*\s*PFN_(cu\w+?)_v(\d+)(_ptsz|_ptds)?\s*\)\s*\((.*?)\)\s*;',
    re.S)
RUNTIME_DECL_RE = re.compile(
    r'extern\s+(?:__host__\s+)?(?:__cudart_builtin__\s+)?(?:__CUDA_DEPRECATED\s+)?'
    r'([^;{}()]*?)\s*\bCUDARTAPI\s+(\w+)\s*\(([^;]*?)\)\s*;', re.S)
PER_THREAD_MACRO_RE = re.compile(r'#define\s+(cuda\w+)\s+__CUDART_API_PT(DS|SZ)\((\w+)\)')

Variant = collections.namedtuple('Variant', 'api version suffix symbol params')
Function = collections.namedtuple('Function', 'name result params')


# Conditions that are false when building for Linux; everything else is kept
# (both branches of other conditionals declare the same Linux ABI).
FALSE_ON_LINUX = re.compile(r'#\s*(?:ifdef\s+(?:_WIN32|__APPLE__)\b|if\s+defined\s*\(?\s*(?:_WIN32|__APPLE__)\s*\)?\s*$)')


def drop_other_platforms(text):
    """Removes the lines inside #ifdef _WIN32 / __APPLE__ blocks (their #else
    branches stay; both branches of any other conditional stay)."""
    out, stack = [], []  # stack: [platform condition, dropping]
    for line in text.splitlines():
        stripped = line.strip()
        if re.match(r'#\s*if', stripped):
            platform = bool(FALSE_ON_LINUX.match(stripped))
            stack.append([platform, platform])
            continue
        if re.match(r'#\s*(else|elif)', stripped) and stack:
            if stack[-1][0]:
                stack[-1][1] = not stack[-1][1]
            continue
        if re.match(r'#\s*endif', stripped) and stack:
            stack.pop()
            continue
        if not any(dropping for _, dropping in stack):
            out.append(line)
    return '\n'.join(out)


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def normalize(text):
    return ' '.join(text.split())


def split_params(params):
    """'int a, float b' -> ['int a', 'float b']; 'void' or '' -> []."""
    params = normalize(params)
    if params in ('', 'void'):
        return []
    parts, depth, current = [], 0, ''
    for ch in params:
        if ch == ',' and depth == 0:
            parts.append(current.strip())
            current = ''
            continue
        depth += ch in '(<[' 
        depth -= ch in ')>]'
        current += ch
    parts.append(current.strip())
    return parts


BUILTIN_TYPE_WORDS = {'void', 'char', 'short', 'int', 'long', 'float', 'double', 'unsigned', 'signed', 'bool'}
QUALIFIER_WORDS = {'const', 'volatile', 'struct', 'enum', 'union'}


def param_name(param):
    """The declared name of one parameter ('const void *srcHost' -> 'srcHost')."""
    words = [w for w in re.findall(r'[A-Za-z_]\w*', param) if w not in QUALIFIER_WORDS]
    if len(words) < 2 or words[-1] in BUILTIN_TYPE_WORDS:
        raise ValueError(f'parameter without a name: {param!r}')
    return words[-1]


def driver_variants(typedef_texts):
    """Every driver ABI variant, sorted by (api, version, suffix)."""
    found = collections.defaultdict(dict)
    for text in typedef_texts:
        for api, version, suffix, params in PFN_RE.findall(strip_comments(text)):
            found[api][(int(version), suffix or '')] = normalize(params)
    variants = []
    for api, by_version in found.items():
        plain = sorted(v for v, s in by_version if not s)
        if not plain:
            raise ValueError(f'{api} has only per-thread variants')
        plain_symbol = {v: api if i == 0 else f'{api}_v{i + 1}' for i, v in enumerate(plain)}
        for (version, suffix), params in by_version.items():
            if suffix:
                base = max(v for v in plain if v <= version) if plain[0] <= version else plain[0]
                symbol = plain_symbol[base] + suffix
            else:
                symbol = plain_symbol[version]
            variants.append(Variant(api, version, suffix, symbol, params))
    variants.sort(key=lambda v: (v.api, v.version, v.suffix))
    symbols = [v.symbol for v in variants]
    duplicates = sorted({s for s in symbols if symbols.count(s) > 1})
    if duplicates:
        raise ValueError(f'two ABI variants map to one symbol: {duplicates}')
    return variants


def runtime_functions(header_texts):
    """name -> Function for every runtime function the headers declare. Default
    arguments (__dv(x), = x) are dropped: a definition cannot repeat them."""
    functions = {}
    for text in header_texts:
        for result, name, params in RUNTIME_DECL_RE.findall(drop_other_platforms(strip_comments(text))):
            params = re.sub(r'__dv\((?:[^()]|\([^()]*\))*\)', '', params)
            params = ', '.join(re.sub(r'\s*=\s*[^,]+$', '', p) for p in split_params(params))
            result = normalize(re.sub(r'\b(__host__|__cudart_builtin__|__CUDA_DEPRECATED)\b', '', result))
            functions.setdefault(name, Function(name, result, params or 'void'))
    return functions


def runtime_per_thread_variants(runtime_api_text):
    """base name -> '_ptds' or '_ptsz', from the header's macro table."""
    return {base: '_pt' + kind.lower() for _, kind, base in PER_THREAD_MACRO_RE.findall(runtime_api_text)}
