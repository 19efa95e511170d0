#!/usr/bin/env bash
# ir-rules-verify judges rule files as the loader does (ctest Rules.VerifyRejectsWhatTheLoaderRejects;
# the loader's side: RewriteCheckTest in tests/passes/rewrite_check_test.cc loads the same files):
# each file of tests/rules/rejected must make it exit nonzero with a FAIL line matching its regex.
# Usage: check_rejected.sh IR_RULES_VERIFY REJECTED_DIR
set -uo pipefail
verify="$1"
dir="$2"
# file, then an extended regex its FAIL line must match.
expect=(
  "grows_without_why.rules" "FAIL .*rule 'neg_as_sub' does not lower the cost order"
  "guard_arity.rules" "FAIL .*rule 'mul_one_four_args': guard result_like takes 1 arguments, not 4"
  "cycle.rules" "FAIL rule cycle: 'exp_to_exp2' \(.*cycle.rules:[0-9]+\) -> 'exp_add_zero_back' \(.*\) -> back to exp\(x\)"
  "duplicate_of_shipped.rules" "FAIL .*duplicate_of_shipped.rules:[0-9]+: rule 'mul_one' is already defined at rules/algebra.rules:[0-9]+"
)
fail=0
for ((i = 0; i < ${#expect[@]}; i += 2)); do
  file="$dir/${expect[i]}"
  output="$("$verify" "$file" 2>&1)"
  status=$?
  if [ "$status" -eq 0 ]; then
    echo "error: ir-rules-verify accepted $file (exit 0):"
    echo "$output"
    fail=1
  elif ! grep -Eq "${expect[i + 1]}" <<<"$output"; then
    echo "error: no line of ir-rules-verify $file matches: ${expect[i + 1]}"
    echo "$output"
    fail=1
  else
    grep -E "^FAIL" <<<"$output" | head -1
  fi
done
exit "$fail"
