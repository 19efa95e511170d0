/*!
 * \file op_attr_types.h
 * \brief The op attributes passes rely on, with the key each is registered under.
 *
 * Register with `.set_attr<FInferShape>("FInferShape", fn)`. Backend-specific attributes
 * (FCompute, FCodeGen) live next to the runtime and AST headers.
 */
#ifndef IR_OP_ATTR_TYPES_H_
#define IR_OP_ATTR_TYPES_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/ast.h"
#include "ir/base.h"
#include "ir/node.h"
#include "ir/op_kernel.h"

namespace ir {

/*! \brief "FListInputNames": input names computed from attributes (default: Op::input_names). */
using FListInputNames = std::function<std::vector<std::string>(const NodeAttrs& attrs)>;
/*! \brief "FListOutputNames": output names computed from attributes (default: output<i>). */
using FListOutputNames = std::function<std::vector<std::string>(const NodeAttrs& attrs)>;

/*!
 * \brief "FInferShape": fills unknown input and output shapes from known ones.
 *
 * Called repeatedly until nothing changes. Must only refine shapes (never contradict);
 * throws ir::Error naming the shapes on a mismatch.
 * \return true when every input and output shape is known afterwards.
 */
using FInferShape =
    std::function<bool(const NodeAttrs& attrs, std::vector<Shape>* in_shapes, std::vector<Shape>* out_shapes)>;

/*! \brief "FInferType": like FInferShape for element types (DType::kUnknown when unknown). */
using FInferType =
    std::function<bool(const NodeAttrs& attrs, std::vector<DType>* in_types, std::vector<DType>* out_types)>;

/*!
 * \brief "FGradient": the gradients of a node's inputs given the gradients of its outputs.
 *
 * Builds new nodes from `node`'s inputs and outputs. Returns one entry per input; an entry
 * with a null node means the gradient of that input is zero.
 */
using FGradient = std::function<std::vector<NodeEntry>(const NodePtr& node, const std::vector<NodeEntry>& ograds)>;

/*!
 * \brief "FSaveAttrs": adds to `dict` (a copy of attrs.dict) the string attributes that rebuild
 * state the op's parser keeps only in attrs.parsed (e.g. a constant's elements, held as an array
 * in memory and written as base64 only when saved). SaveJSON and Symbol::GetAttr use it.
 */
using FSaveAttrs = std::function<void(const NodeAttrs& attrs, std::map<std::string, std::string>* dict)>;

/*! \brief "FInplaceOption": (input, output) pairs that may share storage. */
using FInplaceOption = std::function<std::vector<std::pair<int, int>>(const NodeAttrs& attrs)>;
/*!
 * \brief "TInplaceSameShape": the op's FInplaceOption pairs hold only where the input has the
 * output's shape and dtype (equal bytes are not enough: a broadcast input must not be overwritten).
 */
using TInplaceSameShape = bool;

/*! \brief "FMutateInputs": indices of inputs the op writes to (e.g. assign's target). */
using FMutateInputs = std::function<std::vector<uint32_t>(const NodeAttrs& attrs)>;

/*!
 * \brief "TOverwritesMutatedInputs": the op writes its mutated inputs without reading them
 * (assign), so running it on an uninitialized variable allocates and initializes the variable.
 */
using TOverwritesMutatedInputs = bool;

/*!
 * \brief "FOverwrittenInputs": for ops where it depends on the node (a fused group holding an
 * assign), the mutated inputs written without being read. When registered, it replaces
 * TOverwritesMutatedInputs for that op.
 */
using FOverwrittenInputs = std::function<std::vector<uint32_t>(const NodeAttrs& attrs)>;

/*!
 * \brief "TIsStateful": true for ops whose result is not a function of inputs, or that act
 * beyond their outputs (random ops, host callbacks, collectives).
 */
using TIsStateful = bool;

/*!
 * \brief "TReplayable": a stateful op whose outputs are a function of its inputs and
 * OpContext::seed (the random ops): running it again with the same seed gives the same values,
 * so a gradient may recompute it. Every other stateful op, every op that mutates an input, and
 * every node whose bodies hold one, runs exactly once per run of its graph (or body).
 */
using TReplayable = bool;

/*!
 * \brief "TMayRaise": true for ops whose kernel raises an error for some input values (check_int_operand,
 * a TensorFlow Assert): a node that waits for one (a control dependency) must not be folded away
 * unless the check itself could be evaluated.
 */
using TMayRaise = bool;

/*!
 * \brief "TShapeOnly": true for ops whose outputs depend only on their inputs' shapes and dtypes,
 * never on their values (shape, size, rank, zeros_like), so FoldConstants can evaluate them once
 * the input shapes are known.
 */
using TShapeOnly = bool;

/*!
 * \brief "FInlineConstantInputs": simplifies a node once some of its inputs are known constants
 * (a cond whose predicate is known becomes its taken branch, inlined). FoldConstants calls it with
 * the node (its inputs already those of the rewritten graph) and each input's value (undefined
 * where not known); it returns the entries that replace the node's outputs, one per output, or
 * nothing to keep the node. New nodes it makes need no shapes: FoldConstants infers them.
 */
using FInlineConstantInputs =
    std::function<std::vector<NodeEntry>(const NodePtr& node, const std::vector<NDArray>& values)>;

/*! \brief How an op's outputs depend on its inputs; fusion groups ops by this. */
enum OpPattern : int {
  /*! \brief Output i reads input i (same shapes). */
  kElemWise = 0,
  /*! \brief Output reads inputs with broadcasting. */
  kBroadcast = 1,
  /*! \brief Each output element reads some input elements (reshape, transpose, slice...). */
  kInjective = 2,
  /*! \brief A commutative reduction over axes (sum, max...). */
  kCommReduce = 3,
  /*! \brief Complex op whose output can take an elementwise epilogue (conv, matmul). */
  kOutEWiseFusable = 4,
  /*! \brief Cannot be fused at all. */
  kOpaque = 8,
};
/*! \brief "TOpPattern": the op's OpPattern. */
using TOpPattern = int;
/*!
 * \brief "TReduceKind": what a kCommReduce op computes ("sum", "mean", "max", "min", "prod"),
 * so fusion can generate the reduction.
 */
using TReduceKind = std::string;

const char* OpPatternName(int pattern);

/*!
 * \brief "FComputeEpilogue": runs a kOutEWiseFusable op on the CPU with an elementwise epilogue
 * folded into its kernel (oneDNN post-ops, say): output = epilogue(op(inputs)). `epilogue` is
 * an expression over ast::Var "in0" (the op's result, element by element) and "in1", "in2", ...
 * (the arrays `extra`, broadcast to the output's shape). Returns false, writing nothing, when it
 * cannot take this epilogue; the caller then runs the op and the epilogue as a generated kernel.
 */
using FComputeEpilogue =
    std::function<bool(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                       const ast::Expr& epilogue, const std::vector<NDArray>& extra, const NDArray& output)>;

/*!
 * \brief "FReduceAxes": the axes a kCommReduce op reduces for an input of rank `ndim`
 * (normalized to [0, ndim), sorted, no duplicates). Fusion uses it to generate reductions.
 */
using FReduceAxes = std::function<std::vector<int>(const NodeAttrs& attrs, int ndim)>;

}  // namespace ir

#endif  // IR_OP_ATTR_TYPES_H_
