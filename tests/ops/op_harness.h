/*!
 * \file op_harness.h
 * \brief Test helpers for ops: a reference graph interpreter (shape inference + FCompute per
 * node, independent of the executor), random arrays, numeric gradient checks and checks
 * that an op's FCodeGen computes what its FCompute computes.
 */
#ifndef IR_TESTS_OPS_OP_HARNESS_H_
#define IR_TESTS_OPS_OP_HARNESS_H_

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir/node.h"

namespace ir {
namespace test {

using Attrs = std::map<std::string, std::string>;

/*! \brief Uniform values in [lo, hi) (integers: rounded; bool: lo < 0.5 < hi gives both). */
NDArray RandomArray(const Shape& shape, DType dtype, uint64_t seed, double lo = -1, double hi = 1);
/*! \brief Element i of any CPU array as a double. */
double ValueAt(const NDArray& array, int64_t i);
/*! \brief The elements of any CPU array as doubles. */
std::vector<double> Values(const NDArray& array);

/*!
 * \brief Evaluates `outputs` node by node: variables come from `feeds` (by node), each op's
 * output shapes and dtypes come from its FInferShape/FInferType, then its FCompute runs.
 */
std::vector<NDArray> EvalGraph(const std::vector<NodeEntry>& outputs, const std::map<const Node*, NDArray>& feeds,
                               uint64_t seed = 1);

/*!
 * \brief Evaluates a graph the way EvalGraph does, except that nodes with a kernel in the
 * graph attribute "kernels" (set by RTCGen) run that kernel; feeds are by variable name.
 */
std::vector<NDArray> EvalGraphWithKernels(const Graph& graph, const std::map<std::string, NDArray>& feeds);

/*! \brief A variable entry. */
NodeEntry Var(const std::string& name);

/*! \brief Entry `index` of a new node of `op`. */
NodeEntry Apply(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
                const std::map<std::string, std::string>& attrs = {}, uint32_t index = 0);

/*! \brief `outputs` as a graph with shapes and dtypes inferred from the feeds' (by variable name). */
Graph InferFromFeeds(std::vector<NodeEntry> outputs, const std::map<std::string, NDArray>& feeds);

/*! \brief `graph` after the Fusion pass with option fusion.fmax = `fmax`. */
Graph Fuse(Graph graph, int fmax = 8);

/*! \brief Applies op `op` with `attrs` to `inputs` and returns its outputs. */
std::vector<NDArray> RunOp(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs);

/*! \brief Expects same shape and elements within atol + rtol * |expected|. */
void ExpectNear(const NDArray& actual, const std::vector<double>& expected, double atol = 1e-6, double rtol = 1e-6);
void ExpectNear(const NDArray& actual, const NDArray& expected, double atol = 1e-6, double rtol = 1e-6);

/*! \brief Higham's gamma_k = k u / (1 - k u) for `dtype`'s unit roundoff (2^-24, 2^-53; 0 for integers). */
double Gamma(int64_t k, DType dtype);

/*!
 * \brief Elementwise |actual - expected| <= (gamma_k(dtype) + gamma_k(float64)) * magnitude[i]:
 * the error bound of a sum of at most k terms computed in `actual`'s dtype, in any order,
 * against a float64 reference sum, `magnitude` being the sum of the terms' absolute values
 * (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1). NaN matches NaN.
 */
void ExpectWithinSumBound(const NDArray& actual, const std::vector<double>& expected,
                          const std::vector<double>& magnitude, int64_t k);

struct GradCheckOptions {
  double eps = 1e-6;
  double atol = 1e-6;
  double rtol = 1e-4;
  /*! \brief Inputs to check (default: every float input). */
  std::vector<int> inputs;
  /*! \brief At most this many elements of each input are perturbed. */
  int max_elements = 48;
};

/*!
 * \brief Checks the op's FGradient against central finite differences of
 * L = sum_j sum(w_j * output_j) for random weights w_j, on the given (float64) inputs.
 */
void CheckGradient(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs,
                   const GradCheckOptions& options = GradCheckOptions());

/*!
 * \brief Checks that the op's FCodeGen, evaluated element by element with NumPy broadcasting
 * of the inputs, equals the op's FCompute (within tol for floats, exactly otherwise).
 */
void CheckCodeGen(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs, double tol = 1e-5);

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_OPS_OP_HARNESS_H_
