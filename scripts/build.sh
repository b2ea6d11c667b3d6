#!/usr/bin/env bash
# Configures (once) and builds proflaunch into ./build. Arguments are meson
# options (-Dhip=enabled), applied to an existing build too.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  meson setup build "$@"
elif (($#)); then
  meson configure build "$@"
fi
meson compile -C build
