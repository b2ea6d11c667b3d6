#!/usr/bin/env python3
"""What libamdhip64 exports, three ways, must agree:

  * the checked-in list (preload/hip/libamdhip64_exports.txt), and the real
    library's own exports with their version nodes, when Debian's
    libamdhip64.so.5 is installed;
  * the simulated library's exports, with versions (tests/simgpu/hip);
  * the shim's HIP hooks (hip_hook_list.txt): every export has a wrapper
    except the few functions no HIP header declares (UNDECLARED below:
    internal, debugger and half-float helpers, hiprtc's internals).
"""
import argparse
import os
import re
import subprocess
import sys

UNDECLARED = {
    '_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv',
    '__gnu_f2h_ieee', '__gnu_h2f_ieee', '__hipRegisterSurface', '__hipRegisterTexture',
    'hipEnableActivityCallback', 'hipGetCmdName', 'hipInitActivityCallback',
    'amd_dbgapi_get_build_id', 'amd_dbgapi_get_build_name', 'amd_dbgapi_get_git_hash',
}


def exports_of(library):
    text = subprocess.run(['nm', '-D', '--defined-only', '--with-symbol-versions', library],
                          check=True, capture_output=True, text=True).stdout
    found = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TW':
            match = re.match(r'(.+?)@@?(\S+)$', parts[2])
            found.add(match.groups() if match else (parts[2], ''))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--list', required=True)
    parser.add_argument('--simulated', required=True)
    parser.add_argument('--hooks', required=True)
    parser.add_argument('--real', default='/usr/lib/x86_64-linux-gnu/libamdhip64.so.5')
    args = parser.parse_args()
    listed = set()
    with open(args.list, encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                listed.add(tuple(line.split()))
    failures = []
    simulated = exports_of(args.simulated)
    if simulated != listed:
        failures.append(f'simulated library: extra {sorted(simulated - listed)[:10]}, '
                        f'missing {sorted(listed - simulated)[:10]}')
    if os.path.exists(args.real):
        real = exports_of(args.real)
        if real != listed:
            failures.append(f'real library: extra {sorted(real - listed)[:10]}, missing {sorted(listed - real)[:10]}')
    else:
        print(f'check_exports: {args.real} not installed: the list is not compared with it')
    with open(args.hooks, encoding='utf-8') as f:
        hooked = {line.split()[0] for line in f if line.strip()}
    names = {symbol for symbol, _ in listed}
    unhooked = names - hooked - UNDECLARED
    if unhooked:
        failures.append(f'exports without a HIP hook: {sorted(unhooked)}')
    if hooked - names:
        failures.append(f'hooks for names libamdhip64 does not export: {sorted(hooked - names)}')
    if UNDECLARED & hooked:
        failures.append(f'UNDECLARED names that now have hooks (update the list): {sorted(UNDECLARED & hooked)}')
    for failure in failures:
        print('check_exports: ' + failure, file=sys.stderr)
    if not failures:
        print(f'check_exports: {len(listed)} exports agree; {len(hooked)} hooked, {len(UNDECLARED)} undeclared')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
