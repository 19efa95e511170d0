/*!
 * \file runtime_test_ops.h
 * \brief Small ops registered only in the runtime test binary, so the runtime's tests do not
 * depend on the op families, and shorthands for building graphs.
 *
 *  runtime_test_add(lhs, rhs)      same-shape sum (numeric), in place on either input
 *  runtime_test_scale(data)        2 * data (numeric), in place
 *  runtime_test_matmul(a, b)       2-D float32 matrix product, never in place
 *  runtime_test_cast(data; dtype)  converts to `dtype`
 *  runtime_test_random(data)       uniform [0,1) float32 of data's shape from OpContext::seed
 *  runtime_test_no_kernel(data)    shape and type inference but no FCompute
 *  runtime_test_unknown(data)      output shape never known
 */
#ifndef IR_TESTS_RUNTIME_RUNTIME_TEST_OPS_H_
#define IR_TESTS_RUNTIME_RUNTIME_TEST_OPS_H_

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir/runtime.h"

namespace ir {
namespace runtime_test {

/*! \brief Entry 0 of a new node of `op` named `name`. */
NodeEntry Op(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
             const std::map<std::string, std::string>& attrs = {});
/*! \brief A graph input; hidden attributes such as __kind__, __shape__, __dtype__ in `attrs`. */
NodeEntry Var(const std::string& name, const std::map<std::string, std::string>& attrs = {});
/*! \brief A persistent variable (__kind__ = variable). */
NodeEntry Variable(const std::string& name);
/*! \brief A float32 CPU array of `shape` filled with `value`. */
NDArray Filled(const Shape& shape, float value);
/*! \brief Options that run the graph unfused (InferShape, InferType, PlanMemory). */
SessionOptions UnfusedOptions();

}  // namespace runtime_test
}  // namespace ir

#endif  // IR_TESTS_RUNTIME_RUNTIME_TEST_OPS_H_
