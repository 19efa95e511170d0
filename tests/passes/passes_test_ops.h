/*!
 * \file passes_test_ops.h
 * \brief Small ops registered only in the passes test binary, so the analysis passes are
 * tested independently of the real op library.
 *
 *  passes_test_add(lhs, rhs)      same shape and dtype; gradient (og, og)
 *  passes_test_mul(lhs, rhs)      same shape and dtype; gradient (og*rhs, og*lhs)
 *  passes_test_add_n(...)         variadic sum; gradient og for every input
 *  passes_test_sum_alt(...)       another variadic sum (to check the aggregate option)
 *  passes_test_zeros_like(data)   zeros; gradient: none (null entry)
 *  passes_test_ones_like(data)    ones; gradient: none (null entry)
 *  passes_test_stop(data)         identity whose gradient is a null entry (zero)
 *  passes_test_split(data)        two outputs shaped like data; gradient add(og0, og1)
 *  passes_test_matmul(a, b)       [m,k] x [k,n] -> [m,n], infers backwards; no gradient
 *  passes_test_argmax(data)       int32 output shaped like data; no gradient
 *  passes_test_throws(data)       its FInferShape throws std::out_of_range
 *
 * The same-shape/dtype ops merge what they can and skip values that contradict, leaving the
 * contradiction for the pass to find.
 */
#ifndef IR_TESTS_PASSES_PASSES_TEST_OPS_H_
#define IR_TESTS_PASSES_PASSES_TEST_OPS_H_

#include <map>
#include <string>
#include <vector>

#include "ir/node.h"

namespace ir {
namespace passes_test {

/*! \brief A variable with optional hidden attributes such as __shape__ and __dtype__. */
NodeEntry Var(const std::string& name, const std::map<std::string, std::string>& dict = {});
/*! \brief Output `index` of a new node of op "passes_test_<op>" named `name`. */
NodeEntry Apply(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs, uint32_t index = 0);
/*! \brief The op name of the node of `e` ("variable" for a variable). */
std::string OpName(const NodeEntry& e);

}  // namespace passes_test
}  // namespace ir

#endif  // IR_TESTS_PASSES_PASSES_TEST_OPS_H_
