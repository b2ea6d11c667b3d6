#!/usr/bin/env bash
# Stages a built tree for a GPU machine that cannot build it (no compiler
# packages, no network): the launcher, the shim, proftrace and the sample
# programs, stripped, with the libraries they need beside them, so that
#
#   DIR/launcher/proflaunch, DIR/preload/libproflaunch.so, DIR/tools/proftrace
#
# keep the build tree's layout (the launcher finds the shim at
# ../preload/libproflaunch.so) and tests/gpu/validate.sh DIR runs there.
# proflaunch and proftrace find their libraries through RUNPATH
# ($ORIGIN/../lib), not LD_LIBRARY_PATH, so the traced program loads its own.
# libunwind goes to DIR/unwind: the shim dlopens it by name, so put that
# folder on LD_LIBRARY_PATH where the machine has none (without it the shim
# walks stacks with its own walker alone and says so).
#
#   tests/gpu/stage.sh [build-dir] DIR      (needs patchelf: apt-get install patchelf)
#
# Used for the H200 run of 2026-11-27 (docs/validation.md, "On a real GPU").
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -eq 2 ]; then build=$1; out=$2; else build=$here/build; out=${1:?usage: stage.sh [build-dir] DIR}; fi
command -v patchelf >/dev/null || { echo "stage: patchelf is missing (apt-get install patchelf)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"/{launcher,preload,tools,lib,unwind,tests/simgpu/programs,tests/simgpu/libs}
strip --strip-debug -o "$out/launcher/proflaunch" "$build/launcher/proflaunch"
strip --strip-debug -o "$out/preload/libproflaunch.so" "$build/preload/libproflaunch.so"
strip --strip-debug -o "$out/tools/proftrace" "$build/tools/proftrace"
# The sample and two more programs run on the real runtime unchanged (their
# device code includes sm_90); the cuBLAS-like library travels with them.
for program in training_loop graph_training multi_stream_threads; do
  [ -x "$build/tests/simgpu/programs/$program" ] && cp "$build/tests/simgpu/programs/$program" "$out/tests/simgpu/programs/"
done
cp "$build"/tests/simgpu/libs/libsim*.so "$out/tests/simgpu/libs/" 2>/dev/null || true
# What the two tools link beyond glibc and libstdc++ (the target's are newer).
for tool in "$out/launcher/proflaunch" "$out/tools/proftrace"; do
  ldd "$tool" | awk '/=> \// {print $3}' | grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
    while read -r library; do cp -L "$library" "$out/lib/"; done
  patchelf --set-rpath '$ORIGIN/../lib' "$tool"
done
unwind=$(ldconfig -p | awk '/libunwind\.so\.8 .*x86-64/ {print $NF; exit}')
[ -n "$unwind" ] && cp -L "$unwind" "$out/unwind/"
du -sh "$out"
