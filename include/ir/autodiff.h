/*!
 * \file autodiff.h
 * \brief Reverse-mode differentiation of graphs: the Gradient pass's contract and a shorthand.
 *
 * The Gradient pass reads graph attributes "grad_ys" (entries to differentiate, default the
 * graph outputs), "grad_xs" (entries to differentiate with respect to, required) and
 * "grad_ys_out_grad" (head gradients, default ones like each y), plus the options below.
 * Its result graph has one output per x: the gradient of the sum of the ys (weighted by the
 * head gradients) with respect to that x. Each op on a path from an x to a y must register
 * FGradient. The forward graph is differentiated as written, without rewrite rules: they run
 * when a session binds the graph (SessionOptions::simplify), over forward and gradient alike.
 */
#ifndef IR_AUTODIFF_H_
#define IR_AUTODIFF_H_

#include <string>
#include <vector>

#include "ir/node.h"

namespace ir {

/*! \brief The ops the Gradient pass builds with; graph attributes "grad.<field>" override them. */
struct GradientOptions {
  /*! \brief Variadic op summing the gradient contributions an entry receives ("grad.aggregate_op"). */
  std::string aggregate_op = "add_n";
  /*! \brief Unary op giving zeros shaped like its input, for absent gradients ("grad.zero_op"). */
  std::string zero_op = "zeros_like";
  /*! \brief Unary op giving ones shaped like its input, the default head gradient ("grad.ones_op"). */
  std::string ones_op = "ones_like";
};

/*!
 * \brief Gradients of `ys` with respect to `xs`, one entry per x, built by the Gradient pass.
 *
 * Implemented in core (src/core/autodiff.cc), so every layer may call it: it runs the pass
 * registered as "Gradient" (src/passes/gradient.cc registers it at static initialization) by
 * name through ApplyPass, and throws saying so when no such pass is registered.
 * \param grad_ys head gradients, one per y; empty means ones like each y.
 * \throws ir::Error naming the node when an op on the way registers no FGradient.
 */
std::vector<NodeEntry> Gradients(const std::vector<NodeEntry>& ys, const std::vector<NodeEntry>& xs,
                                 const std::vector<NodeEntry>& grad_ys = {}, const GradientOptions& options = {});

/*!
 * \brief Whether `grad`, what Gradients returned for `x`, is the zeros it gives an x that no
 * gradient reached (no path, or only through ops passing none, such as a cast to an integer).
 */
bool IsUnreachedGradient(const NodeEntry& grad, const NodeEntry& x);

}  // namespace ir

#endif  // IR_AUTODIFF_H_
