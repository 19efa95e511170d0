/*!
 * \file cuda_test_util.h
 * \brief What the CUDA tests share: compiling with the "cuda" compiler, assembling with ptxas,
 * and building graphs from ops.
 */
#ifndef IR_TESTS_CUDA_CUDA_TEST_UTIL_H_
#define IR_TESTS_CUDA_CUDA_TEST_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ops/op_harness.h"

namespace ir {
namespace test {

/*! \brief PTX of `source` from NVRTC (what the "cuda" device target compiles with). */
std::string CompileCUDA(const std::string& source);

/*! \brief Assembles `ptx` with `ptxas -arch=sm_90`; "" on success, else ptxas's output. */
std::string PtxasErrors(const std::string& ptx);

/*! \brief Expects `source` to compile with NVRTC and its PTX to assemble with ptxas (`what` names it). */
void ExpectCompilesAndAssembles(const std::string& source, const std::string& what);

/*! \brief A LeNet training step: its outputs (loss, the SGD update token) and feeds (x, labels, weights). */
struct LeNet {
  std::vector<NodeEntry> outputs;
  std::map<std::string, NDArray> feeds;
  /*! \brief Names of the trained variables (w1, b1, ... w4, b4). */
  std::vector<std::string> variables;
};

/*!
 * \brief Conv-pool x2 (5x5 SAME convolutions with c1 and c2 channels, 2x2 max pooling), dense
 * layers of `hidden` and 10 units, sparse softmax cross-entropy, SGD with assign_sub, on
 * `image` x `image` single-channel images (a multiple of 4). Defaults: the classic LeNet.
 */
LeNet BuildLeNet(int64_t batch, int64_t image = 28, int64_t c1 = 6, int64_t c2 = 16, int64_t hidden = 120);

/*! \brief The CUDA C source CodeGen prints for `graph` after Fusion (F_max `fmax`). */
std::string FusedCUDASource(Graph graph, int fmax = 8);

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_CUDA_CUDA_TEST_UTIL_H_
