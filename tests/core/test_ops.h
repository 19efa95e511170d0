/*!
 * \file test_ops.h
 * \brief Small ops and passes registered only in the core test binary.
 *
 *  core_test_add(lhs, rhs)          same-shape elementwise, FInferShape/FInferType
 *  core_test_split(data; num_outputs) several outputs, FListOutputNames
 *  core_test_concat(...)            variadic
 *  core_test_sum(...; num_args)     input count computed from a parameter
 *  core_test_assign(ref, value)     mutates input 0 (FMutateInputs)
 *  core_test_param(data; axis, scale, mode) typed parameters
 *  core_test_opaque(data)           registers no FInferShape
 */
#ifndef IR_TESTS_CORE_TEST_OPS_H_
#define IR_TESTS_CORE_TEST_OPS_H_

#include "ir/graph.h"
#include "ir/symbol.h"

namespace ir {
namespace test {

/*! \brief A symbol for op `op` applied to `inputs` with string attributes. */
Symbol Apply(const std::string& op, const std::vector<Symbol>& inputs,
             const std::map<std::string, std::string>& attrs = {}, const std::string& name = "");

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_CORE_TEST_OPS_H_
