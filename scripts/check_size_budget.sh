#!/usr/bin/env bash
# Checks the size guards of the budget file (default .ci/size_budget; its header says the rules):
# a line budget per folder of src/, frontends/ and tinyflow_demo/, and a line limit per source
# file. Fails, printing every violation with its path and count, when a folder is over its budget,
# a source file is over its limit, or a folder that holds source files has no budget (neither a
# line of its own nor a parent's line ending in /**).
# Usage: scripts/check_size_budget.sh [BUDGET_FILE]   (ctest: Build.SizeBudget)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
budget_file="$(realpath "${1:-$root/.ci/size_budget}")"
shown="${budget_file#"$root"/}" # .ci/size_budget when it is the tree's own
cd "$root"

roots=(src frontends tinyflow_demo)
file_limit=""
declare -A budget=() recursive=() raised=() used=() unbudgeted=()

while read -r first second third rest; do
  [[ -z "$first" || "$first" == \#* ]] && continue
  if [[ "$first" == file-limit && "$second" =~ ^[0-9]+$ && -z "$third" ]]; then
    file_limit="$second"
  elif [[ "$first" == file && "$second" =~ ^[0-9]+$ && -n "$third" && -z "$rest" ]]; then
    raised[$third]="$second"
  elif [[ "$first" =~ ^[0-9]+$ && -n "$second" && -z "$third" ]]; then
    folder="${second%/}"
    if [[ "$folder" == */\*\* ]]; then
      folder="${folder%/\*\*}"
      recursive[$folder]=1
    fi
    budget[$folder]="$first"
    used[$folder]=0
  else
    echo "FAIL: malformed line in $shown: '$first $second $third $rest'" >&2
    echo "      (want: 'file-limit <lines>', '<lines> <folder>[/**]' or 'file <lines> <path>')" >&2
    exit 1
  fi
done <"$budget_file"
if [ -z "$file_limit" ]; then
  echo "FAIL: $shown has no 'file-limit <lines>' line" >&2
  exit 1
fi

# The folder whose budget counts files of folder $1: its own line, else the nearest parent's line
# ending in /**; "" when there is none.
owner_of() {
  local dir="$1"
  [[ -n "${budget[$dir]+x}" ]] && { echo "$dir"; return; }
  while [[ "$dir" == */* ]]; do
    dir="${dir%/*}"
    if [[ -n "${budget[$dir]+x}" ]]; then
      [[ -n "${recursive[$dir]+x}" ]] && echo "$dir"
      return
    fi
  done
}

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Source files: code and build scripts. Docs (README.md...), data and golden files (.pb, .pbtxt,
# .npy, .json, fuzz dictionaries...) and caches (__pycache__) are neither counted nor limited.
while IFS= read -r -d '' path; do
  path="${path#./}"
  n="$(wc -l <"$path")"
  limit="${raised[$path]:-$file_limit}"
  if [ "$n" -gt "$limit" ]; then
    fail "$path: $n lines, over the per-file limit of $limit."
  fi
  dir="${path%/*}"
  owner="$(owner_of "$dir")"
  if [ -z "$owner" ]; then
    unbudgeted[$dir]=$((${unbudgeted[$dir]:-0} + n))
  else
    used[$owner]=$((used[$owner] + n))
  fi
done < <(find "${roots[@]}" -name __pycache__ -prune -o -type f \
  \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cl' -o -name '*.h' \
  -o -name '*.hpp' -o -name '*.py' -o -name '*.proto' -o -name '*.cmake' -o -name '*.sh' \
  -o -name CMakeLists.txt \) -print0 | sort -z)

for dir in $(printf '%s\n' "${!unbudgeted[@]}" | sort); do
  fail "$dir: ${unbudgeted[$dir]} lines in a folder with no budget (give it a line in $shown)."
done
for folder in $(printf '%s\n' "${!budget[@]}" | sort); do
  shown_folder="$folder${recursive[$folder]+/**}"
  if [ "${used[$folder]}" -gt "${budget[$folder]}" ]; then
    fail "$shown_folder: ${used[$folder]} lines, over the budget of ${budget[$folder]}."
  else
    echo "OK: $shown_folder: ${used[$folder]} lines (budget ${budget[$folder]})"
  fi
  [ -d "$folder" ] || echo "note: $folder (budget ${budget[$folder]}) does not exist any more"
done
for path in $(printf '%s\n' "${!raised[@]}" | sort); do
  if [ ! -f "$path" ]; then
    echo "note: $path (limit raised to ${raised[$path]}) does not exist any more"
  elif [ "$(wc -l <"$path")" -le "$file_limit" ]; then
    echo "note: $path is within the per-file limit again: its raised limit can go"
  fi
done
if [ "$failures" -gt 0 ]; then
  echo "$failures violation(s). Shrink or split, or raise the budget or limit deliberately: edit $shown" >&2
  echo "in the commit that grows it, saying why there." >&2
  exit 1
fi
