#!/usr/bin/env bash
# scripts/layer_map.py (the header rule of Build.Layering) can fail: a crafted tree where core
# includes a header owned by passes, an unplaced header, an unplaced folder, a stale allowlist entry.
# Usage: tests/build/layer_map_test.sh   (ctest: Build.LayerMapSelfTest)
set -euo pipefail
check="$(cd "$(dirname "$0")/../.." && pwd)/scripts/layer_map.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include/ir" "$tmp/src/core" "$tmp/src/passes" "$tmp/scripts"
printf 'ir_add_layer(core)\nir_add_layer(passes USES core)\n' >"$tmp/CMakeLists.txt"
touch "$tmp/include/ir/base.h" "$tmp/include/ir/pass_api.h"
printf '[headers]\nbase.h core\npass_api.h passes\n' >"$tmp/scripts/layer_map.txt"
printf '#include "ir/base.h"\n' >"$tmp/src/core/a.cc"
printf '#include "ir/pass_api.h"\n#include "ir/base.h"\n' >"$tmp/src/passes/p.cc"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect MESSAGE: the check fails and prints MESSAGE
  if /usr/bin/python3 "$check" "$tmp" 2>"$tmp/err"; then fail "passed, expected: $1"; fi
  grep -qF "$1" "$tmp/err" || fail "expected '$1', got: $(cat "$tmp/err")"
}
/usr/bin/python3 "$check" "$tmp" || fail "a clean tree failed"
printf '#include "ir/pass_api.h"\n' >>"$tmp/src/core/a.cc"
expect 'src/core/a.cc:2: include "ir/pass_api.h": its implementation is in layer passes'
printf '[allowed_includes]\nsrc/core/a.cc ir/pass_api.h  # test\n' >>"$tmp/scripts/layer_map.txt"
/usr/bin/python3 "$check" "$tmp" || fail "an allowed include failed"
printf '#include "ir/base.h"\n' >"$tmp/src/core/a.cc"
expect "stale [allowed_includes] entry 'src/core/a.cc ir/pass_api.h'"
printf '[headers]\nbase.h core\npass_api.h passes\n' >"$tmp/scripts/layer_map.txt"
touch "$tmp/include/ir/new.h"
expect 'include/ir/new.h:1: header not placed in a layer'
rm "$tmp/include/ir/new.h"
mkdir "$tmp/src/core/sub"
expect 'src/core/sub:1: folder not placed in a layer'
rmdir "$tmp/src/core/sub"
mkdir -p "$tmp/client"
printf '[clients]\nclient ir/c_api.h  a C API client\n' >>"$tmp/scripts/layer_map.txt"
printf '#include "ir/c_api.h"\n#include "own.h"\n' >"$tmp/client/m.cc"
/usr/bin/python3 "$check" "$tmp" || fail "a C API client failed"
printf '#include "ir/base.h"\n' >>"$tmp/client/m.cc"
expect 'client/m.cc:3: include "ir/base.h": client is a client of the C API'
echo "OK: layer_map.py fails on a forbidden include, a stale entry, an unplaced header and folder, a client past the C API"
