#!/usr/bin/env bash
# Configures (once) and builds proflaunch into ./build.
#
#   scripts/build.sh [-Dname=value...] [--target TARGET...]
#
# -D arguments are meson options: a new build is set up with them; an
# existing build is reconfigured with those whose value differs (none: no
# reconfigure). --target builds only these ninja targets (`sample`: what
# scripts/run-sample.sh runs); without it, everything configured.
set -euo pipefail
cd "$(dirname "$0")/.."
options=()
targets=()
while (($#)); do
  case "$1" in
    --target) targets+=("${2:?--target needs a ninja target}"); shift 2 ;;
    -D?*=*) options+=("$1"); shift ;;
    *) echo "usage: scripts/build.sh [-Dname=value...] [--target TARGET...]" >&2; exit 64 ;;
  esac
done

if [ ! -f build/meson-private/coredata.dat ]; then
  meson setup build "${options[@]}"
elif [ ! -f build/build.ninja ]; then
  meson setup --reconfigure build "${options[@]}"
elif ((${#options[@]})); then
  # The plan: "wipe", "configure" or "keep", then the options whose value
  # in the build differs.
  mapfile -t plan < <(meson introspect build --buildoptions | python3 -c '
import json, sys
current = {o["name"]: o["value"] for o in json.load(sys.stdin)}
changes, wipe = [], False
for arg in sys.argv[1:]:
    name, value = arg[2:].split("=", 1)
    if str(current.get(name)).lower() != value.lower():
        changes.append(arg)
        # An "auto" configure asked the compiler for the HIP headers, and meson
        # keeps that answer in build/ for good, also across --reconfigure: a
        # "not found" from before the HIP packages were installed would fail
        # -Dhip=enabled (issue 36). "disabled" never asks, "enabled" must find.
        wipe = wipe or (name == "hip" and value == "enabled" and current.get(name) == "auto")
print("wipe" if wipe else "configure" if changes else "keep")
print("\n".join(changes))
' "${options[@]}")
  case "${plan[0]}" in
    wipe)
      echo "build.sh: build/ was configured with -Dhip=auto: setting it up again with ${options[*]}" >&2
      meson setup --wipe build "${options[@]}"
      ;;
    # --reconfigure, not `meson configure`: it also takes an option this
    # build's meson_options.txt did not have yet (-Dtests in an older build).
    configure) meson setup --reconfigure build "${plan[@]:1}" ;;
  esac
fi
if ((${#targets[@]})); then
  ninja -C build "${targets[@]}"
else
  meson compile -C build
fi
