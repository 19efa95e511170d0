#!/usr/bin/env bash
# scripts/check_layer_symbols.py can fail: two crafted layers, "low" and "high", where high calls a
# function low defines. It must fail when high may not use low, pass when it may, pass with an
# allowlist entry for the call, and fail on a stale entry.
# Usage: tests/build/check_layer_symbols_test.sh CXX   (ctest: Build.LayerSymbolsSelfTest)
set -euo pipefail
cxx="${1:-c++}"
check="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check_layer_symbols.py"
if ! command -v nm >/dev/null; then
  echo "SKIP: nm not found"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/CMakeFiles/ir_low.dir/src/low" "$tmp/CMakeFiles/ir_high.dir/src/high" "$tmp/layers"
echo 'namespace ir { int LowFunction(int x) { return x + 1; } }' >"$tmp/low.cc"
echo 'namespace ir { int LowFunction(int); int HighFunction() { return LowFunction(1); } }' >"$tmp/high.cc"
"$cxx" -c "$tmp/low.cc" -o "$tmp/CMakeFiles/ir_low.dir/src/low/low.cc.o"
"$cxx" -c "$tmp/high.cc" -o "$tmp/CMakeFiles/ir_high.dir/src/high/high.cc.o"
echo "$tmp/CMakeFiles/ir_low.dir/src/low/low.cc.o" >"$tmp/layers/low.objects"
echo "$tmp/CMakeFiles/ir_high.dir/src/high/high.cc.o" >"$tmp/layers/high.objects"
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'low low\nhigh high\n' >"$tmp/layers/matrix.txt"
: >"$tmp/empty.allow"
if "$check" "$tmp" "$tmp/empty.allow" 2>"$tmp/err"; then fail "a forbidden call passed"; fi
grep -q 'src/high/high.cc (high): ir::LowFunction(int) is defined in src/low/low.cc (low)' "$tmp/err" ||
  fail "the violation is not named: $(cat "$tmp/err")"

echo 'high low ir::LowFunction*  # allowed for the test' >"$tmp/one.allow"
"$check" "$tmp" "$tmp/one.allow" >/dev/null || fail "an allowlisted violation failed"
echo 'high low ir::Gone*  # matches nothing' >>"$tmp/one.allow"
if "$check" "$tmp" "$tmp/one.allow" 2>"$tmp/err"; then fail "a stale allowlist entry passed"; fi
grep -q 'stale allowlist entry' "$tmp/err" || fail "the stale entry is not named: $(cat "$tmp/err")"

printf 'low low\nhigh high low\n' >"$tmp/layers/matrix.txt"
"$check" "$tmp" "$tmp/empty.allow" >/dev/null || fail "an allowed call failed"
echo "OK: check_layer_symbols.py fails on a forbidden call and a stale allowlist entry"
