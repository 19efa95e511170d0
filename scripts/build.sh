#!/usr/bin/env bash
# Configures and builds into build/ (or $1 with extra CMake arguments after it).
# Usage: scripts/build.sh [BUILD_DIR] [CMAKE_ARGS...]
# IR_BUILD_TARGETS: the targets to build, space-separated (default: all), e.g. "tinyflow_native" (scripts/demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"
targets=()
for target in ${IR_BUILD_TARGETS:-}; do
  targets+=(--target "$target")
done
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}" "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
