#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine:
#   1. installs missing Debian packages,
#   2. builds build/ (Release, -Wall -Wextra) and runs every test with ctest,
#   3. ThreadSanitizer: builds the threading layers instrumented into build/ (cmake/ir_lean_sanitize.cmake)
#      and runs the thread tests and the Python thread stress program under it (scripts/tsan_test.sh),
#   4. builds build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer and runs the tests again.
# Set IR_SKIP_SANITIZERS=1 to skip steps 3 and 4 during development (IR_SKIP_TSAN=1: step 3 only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs="$(nproc 2>/dev/null || echo 2)"

echo "== build (Release) =="
scripts/build.sh build -DIR_WERROR=ON
echo "== tests (Release) =="
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${IR_SKIP_SANITIZERS:-0}" != "1" ] && [ "${IR_SKIP_TSAN:-0}" != "1" ]; then
  echo "== ThreadSanitizer (threads tests) =="
  scripts/tsan_test.sh build
fi

if [ "${IR_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer) =="
  # -O1 -g1: sanitizer reports keep file:line, and the build takes far less than -O2 -g (the test suites'
  # own files: -O0, IR_TEST_OPTIMIZATION's default in a sanitizer tree).
  CMAKE_BUILD_TYPE=None CXXFLAGS="${CXXFLAGS:-} -O1 -g1" scripts/build.sh build-asan "-DIR_SANITIZE=address;undefined" -DIR_BUILD_BENCH=OFF
  echo "== tests (sanitizers) =="
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs")
fi
echo "All tests passed."
