#!/usr/bin/env bash
# Fails when a part of the tree has more lines than its budget in the budget file (default
# .ci/size_budget; each line: a budget in lines, then one or more paths counted together;
# '#' starts a comment). Prints every count against its budget.
# Usage: scripts/check_size_budget.sh [BUDGET_FILE]   (ctest: Build.SizeBudget)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
budget_file="$(realpath "${1:-$root/.ci/size_budget}")"
shown="${budget_file#"$root"/}"  # .ci/size_budget when it is the tree's own
cd "$root"

# Lines of every file under the given paths (a missing path counts 0).
count_lines() {
  local path total=0 n
  for path in "$@"; do
    [ -e "$path" ] || continue
    n="$(find "$path" -type f -print0 | xargs -0 -r cat | wc -l)"
    total=$((total + n))
  done
  echo "$total"
}

failures=0
while read -r budget paths; do
  [[ -z "$budget" || "$budget" == \#* ]] && continue
  if ! [[ "$budget" =~ ^[0-9]+$ && -n "$paths" ]]; then
    echo "FAIL: malformed line in $shown: '$budget $paths' (want: <lines> <path>...)" >&2
    exit 1
  fi
  # shellcheck disable=SC2086  # paths are whitespace-separated by the file's format
  count="$(count_lines $paths)"
  if [ "$count" -gt "$budget" ]; then
    echo "FAIL: $paths: $count lines, over the budget of $budget." >&2
    echo "      Shrink it, or raise the budget deliberately: edit $shown in the same commit." >&2
    failures=$((failures + 1))
  else
    echo "OK: $paths: $count lines (budget $budget)"
  fi
done <"$budget_file"
[ "$failures" -eq 0 ]
