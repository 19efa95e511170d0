#!/usr/bin/env bash
# Checks the layering of src/ that include paths alone cannot (docs/ARCHITECTURE.md, "Layers"):
#   - no include path containing ".." (it would step around a layer's include directory);
#   - no include that resolves next to the including file (src/runtime/x.cc including
#     "cpu/y.h" would reach src/runtime/cpu without the layer allowing it; "y.h" hides the layer);
#   - no include of ops/ from src/runtime or src/passes (op internals stay in src/ops);
#   - no IR_REGISTER_OP under src/runtime (ops register their kernels in their own files);
#   - no include of a frontend (frontends/..., ir_tf/...) from src/;
#   - no include of an "ir/x.h" whose implementation lives in a layer the includer may not use,
#     every header of include/ir/ and every folder of src/ placed (scripts/layer_map.py, its
#     table scripts/layer_map.txt; the matrix is CMakeLists.txt's).
# Prints file:line for each violation and exits 1; exits 0 when src/ is clean.
# Usage: scripts/check_layering.sh [SOURCE_DIR]   (ctest: Build.Layering)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"

failures=0
# report FILE LINE MESSAGE: one violation.
report() {
  echo "$1:$2: $3" >&2
  failures=$((failures + 1))
}

# Every `#include "..."` / `#include <...>` of src/ as FILE:LINE:PATH.
includes() {
  grep -rnE --include='*.h' --include='*.cc' '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' src |
    sed -E 's/^([^:]*):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]*)[">].*/\1:\2:\3/'
}

while IFS=: read -r file line path; do
  dir="$(dirname "$file")"
  if [[ "$path" == *..* ]]; then
    report "$file" "$line" "include \"$path\" contains '..': include through the layer's path instead"
  elif [[ -f "$dir/$path" ]]; then
    report "$file" "$line" "include \"$path\" resolves next to the including file: write the layer's path"
  fi
  if [[ "$path" == ops/* && ( "$file" == src/runtime/* || "$file" == src/passes/* ) ]]; then
    report "$file" "$line" "include \"$path\": runtime and passes may not include op internals (move the shared declaration to include/ir/)"
  fi
  if [[ "$path" == frontends/* || "$path" == ir_tf/* ]]; then
    report "$file" "$line" "include \"$path\": src/ never depends on a frontend"
  fi
done < <(includes)

while IFS=: read -r file line _; do
  report "$file" "$line" "IR_REGISTER_OP under src/runtime: register an op's kernels in its own file (src/ops/)"
done < <(grep -rnE --include='*.h' --include='*.cc' '^[^/*]*\bIR_REGISTER_OP\(' src/runtime || true)

# The headers of include/ir/ by owner layer (prints file:line: message itself).
if ! /usr/bin/python3 "$root/scripts/layer_map.py" "$root"; then
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures layering violation(s) in src/ (rules: scripts/check_layering.sh, docs/ARCHITECTURE.md)" >&2
  exit 1
fi
echo "OK: src/ layering (includes, include/ir/ headers by owner layer, op registrations)"
