#!/usr/bin/env bash
# Runs ir-rules-verify over the deliberately wrong rules and checks that it exits nonzero and
# rejects each one with the expected counterexample (ctest Rules.VerifyRejectsWrong).
# Usage: check_wrong.sh IR_RULES_VERIFY WRONG_RULES
set -uo pipefail
output="$("$1" "$2")"
status=$?
echo "$output"
fail=0
if [ "$status" -eq 0 ]; then
  echo "error: ir-rules-verify accepted wrong rules (exit 0)"
  fail=1
fi
# rule name, then an extended regex its FAIL line must match.
expect=(
  "wrong_sub_self" "x = \[.*(NaN|Inf)"
  "wrong_exp_product" "counterexample a = .*b = "
  "wrong_add_zero" "x = \[.*-0"
  "wrong_log_product" "counterexample x = .*y = "
  "wrong_xent_gradient" "counterexample z = .*y = "
  "wrong_double_transpose" "counterexample x = "
  "wrong_add_zero_rounding" "special values: counterexample x = \[.*-0"
  "wrong_add_zero_stabilizing" "NaN and zero signs: counterexample x = \[.*-0"
  "wrong_div_self_stabilizing" "NaN and zero signs: counterexample x = \[.*NaN"
  "wrong_log_exp_stabilizing" "NaN and zero signs: counterexample x = \[.*-0"
  "wrong_mul_zero_nsz" "sign of zero: counterexample x = \[.*(NaN|Inf)"
  "wrong_scalar_chain_rounding" "special values: counterexample .*Inf"
)
for ((i = 0; i < ${#expect[@]}; i += 2)); do
  name="${expect[i]}"
  line="$(grep -E "^FAIL $name \(" <<<"$output")"
  if ! grep -Eq "${expect[i + 1]}" <<<"$line"; then
    echo "error: no FAIL line for $name matching '${expect[i + 1]}' (got: '$line')"
    fail=1
  fi
done
exit $fail
