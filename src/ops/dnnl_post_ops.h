/*!
 * \file dnnl_post_ops.h
 * \brief An elementwise epilogue (FComputeEpilogue's expression) as oneDNN post-ops: eltwise
 * steps (relu, tanh, logistic, exp, linear) and binary steps (add, sub, mul) reading
 * arrays broadcast to the primitive's destination.
 */
#ifndef IR_OPS_DNNL_POST_OPS_H_
#define IR_OPS_DNNL_POST_OPS_H_

#include <unordered_map>
#include <vector>

#include "ir/ast.h"
#include "ops/dnnl_utils.h"

namespace ir {
namespace op {
namespace dnnl_utils {

class PostOps {
 public:
  /*!
   * \brief Translates `epilogue`, a chain of steps over Var "in0" (the primitive's result) that
   * may read Vars "in1", "in2", ... (the float32 arrays `extra`). `out` is the result's shape
   * and `order` lists, for each dimension of the primitive's logical destination, the axis of
   * `out` it is (matmul: identity; NHWC convolution: 0, 3, 1, 2). False when some step has no
   * post-op or an array does not broadcast to `out`.
   */
  bool Translate(const ast::Expr& epilogue, const std::vector<NDArray>& extra, const Shape& out,
                 const std::vector<int>& order);
  /*! \brief True when some step reads an array (a binary post-op). */
  bool HasBinary() const;
  /*! \brief DefaultAttr() with these post-ops. */
  dnnl::primitive_attr Attr() const;
  /*! \brief Adds what determines the post-ops (steps, constants, operand layouts) to a primitive key. */
  void AddTo(PrimitiveKey* key) const;
  /*! \brief Adds the binary steps' operands to a primitive's execution arguments. */
  void AddArgs(std::unordered_map<int, dnnl::memory>* args) const;

 private:
  struct Step {
    bool binary = false;
    dnnl::algorithm algorithm;
    float alpha = 0, beta = 0;
    dnnl::memory::desc operand;  // binary steps
    const void* data = nullptr;  // binary steps
  };
  bool Chain(const ast::Expr& e);
  bool Eltwise(const ast::Expr& x, dnnl::algorithm algorithm, float alpha = 0, float beta = 0);
  bool Binary(const ast::Expr& x, const ast::Expr& operand, dnnl::algorithm algorithm);

  const std::vector<NDArray>* extra_ = nullptr;
  Shape out_;
  std::vector<int> order_;
  std::vector<Step> steps_;
};

}  // namespace dnnl_utils
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_DNNL_POST_OPS_H_
