#!/usr/bin/env bash
# Installs what proflaunch needs on Debian 12, if it is missing, and checks
# for the CUDA toolkit headers (which apt cannot provide).
#
#   scripts/install-deps.sh [--sample] [--with-amd]
#
# Without --sample: everything the tests need (scripts/test.sh).
# --sample: only what building and running the sample needs
#   (scripts/run-sample.sh: the launcher, the shim, proftrace and the
#   simulated GPU stack): no test frameworks, browser, clang or Python
#   headers.
# --with-amd also installs Debian's HIP 5.2 (headers, hipcc, the real
#   libamdhip64) and the real rocRAND and rocSPARSE: the HIP hooks, the
#   simulated HIP runtime and the AMD tests are built only where they are.
set -euo pipefail
sample_only=0
with_amd=0
for arg in "$@"; do
  case "$arg" in
    --sample) sample_only=1 ;;
    --with-amd) with_amd=1 ;;
    *) echo "usage: scripts/install-deps.sh [--sample] [--with-amd]" >&2; exit 64 ;;
  esac
done

# What the sample builds and runs.
packages=(
  g++ meson ninja-build pkg-config
  ccache  # meson uses it when present: a second build of the same sources (CI) is mostly cache hits
  libzstd-dev zlib1g-dev libdw-dev libelf-dev
  libunwind-dev  # the shim's native stacks (libunwind is loaded at run time)
  libisal-dev  # .pftrace: packets deflated inside the file (ISA-L igzip)
  libcli11-dev
  libcpp-httplib-dev  # `proftrace view` serves the trace to the Perfetto UI
  libsqlite3-dev  # `proftrace export --sqlite`
  python3  # the code generators of the shim and the simulated stack
)
if ((!sample_only)); then
  packages+=(
    # GL, EGL and VDPAU headers: the runtime's graphics-interop entry points
    # (cudaGL*, cudaEGL*, cudaVDPAU*) are declared against them, so the hook
    # generator wraps those exports only where they are present
    # (preload/cuda/gen); hook_table_test checks every export has a wrapper.
    # Not for the sample: they bring Mesa and LLVM (about 200 MB), and the
    # training loop calls none of those entry points.
    libgl-dev libegl-dev libvdpau-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer under ASan and UBSan
    protobuf-compiler  # protoc --decode checks the .pftrace output (tests/unit/tools)
    libpython3.11-dev  # the CPython 3.11 frame layout test (tests/unit/stacks)
    python3-torch  # Debian's real PyTorch (CPU build): CPU samples in torch's own code (tests/e2e/cpu)
    # ROCm SMI's real header: the simulated librocm_smi64.so.1 is built
    # against it (tests/simgpu/rocm_smi; its AMD end-to-end test also needs
    # --with-amd). It brings Debian's real librocm_smi64.so.1 too, which the
    # launcher then finds and which fails to start without the amdgpu driver.
    librocm-smi-dev
    chromium  # the browser tests of the memory page and `proftrace view` (tests/browser)
  )
  # Node and npm for the browser test's driver (playwright-core, pinned in
  # tests/browser/package-lock.json). A node that is already installed (e.g.
  # from NodeSource) is kept.
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
if ((with_amd)); then
  packages+=(libamdhip64-dev hipcc librocrand-dev librocsparse-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda_home/include/cuda.h" ]; then
  echo "install-deps: the CUDA toolkit headers are missing: no $cuda_home/include/cuda.h." >&2
  echo "install-deps: install the CUDA 13 toolkit (it cannot come from Debian's archive here) or set CUDA_HOME." >&2
  exit 1
fi

# playwright-core drives /usr/bin/chromium; it downloads no browser of its own.
browser_tests="$(dirname "$0")/../tests/browser"
if ((!sample_only)) && [ ! -d "$browser_tests/node_modules/playwright-core" ]; then
  echo "install-deps: npm ci in tests/browser"
  (cd "$browser_tests" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
