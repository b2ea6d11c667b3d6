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
  # Meson keeps the answers of compiler checks (has_header) in build/ for
  # good, also across --reconfigure, so a build whose checks ran before
  # packages they look for were installed keeps "not found" (issue 36: the
  # HIP header, then -Dhip=enabled failed). Such a build is set up again
  # with --wipe (ccache keeps the objects): one configured for the sample
  # alone (-Dtests=false, the sample's packages) turned to -Dtests=true, or
  # one at -Dhip=auto turned to enabled. Our scripts never leave hip at auto
  # ("disabled" asks nothing, "enabled" must find).
  # The plan: "wipe", "configure" or "keep", then the options whose value in
  # the build differs.
  mapfile -t plan < <(meson introspect build --buildoptions | python3 -c '
import json, sys
current = {o["name"]: str(o["value"]).lower() for o in json.load(sys.stdin)}
changes, wipe = [], False
for arg in sys.argv[1:]:
    name, value = arg[2:].split("=", 1)
    if current.get(name) != value.lower():
        changes.append(arg)
        wipe = wipe or (name, current.get(name), value) in {("tests", "false", "true"), ("hip", "auto", "enabled")}
print("wipe" if wipe else "configure" if changes else "keep")
print("\n".join(changes))
' "${options[@]}")
  case "${plan[0]}" in
    wipe)
      echo "build.sh: setting build/ up again for ${plan[*]:1}: its compiler checks may predate packages installed since" >&2
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
