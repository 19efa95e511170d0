/*!
 * \file lazy_infer.cc
 * \brief ShapeOf and DTypeOf without computing: the ops' FInferShape/FInferType applied forward
 * over the pending DAG, each node once (the results are kept in the Pending node).
 */
#include <utility>

#include "core/json_util.h"
#include "ir/node.h"
#include "ir/op_attr_types.h"
#include "runtime/lazy/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

Shape ShapeOfValue(const Array::Value& value) {
  return value.node ? value.node->shapes[value.index] : value.data.shape();
}
DType DTypeOfValue(const Array::Value& value) {
  return value.node ? value.node->dtypes[value.index] : value.data.dtype();
}

/*! \brief "[2,3] float32, [4,5] float32": the node's input shapes and dtypes, for errors. */
std::string InputsText(const Pending& node) {
  std::vector<std::string> text;
  for (const ValuePtr& input : node.inputs) {
    text.push_back(StrCat(ShapeOfValue(*input), " ", DTypeName(DTypeOfValue(*input))));
  }
  return Join(text, ", ");
}

/*! \brief The node's attributes as a graph node would hold them (parsed by the op). */
NodeAttrs AttrsOf(const Pending& node) {
  NodeAttrs attrs;
  attrs.op = node.op;
  attrs.name = node.op->name;
  attrs.dict = node.attrs;
  if (node.op->attr_parser) node.op->attr_parser(&attrs);
  return attrs;
}

template <typename Value, typename FInfer>
void RunInfer(const char* attr, const NodeAttrs& attrs, std::vector<Value>* in, std::vector<Value>* out) {
  static const OpMap<FInfer>* finfer = Op::FindAttr<FInfer>(attr);
  IR_CHECK(finfer != nullptr && finfer->count(attrs.op)) << "the op registers no " << attr;
  (*finfer)[attrs.op](attrs, in, out);
}

/*! \brief Infers one node whose inputs are inferred; throws ir::Error naming it and its inputs. */
void InferNode(Pending* node) {
  std::vector<Shape> in_shapes, out_shapes(node->num_outputs);
  std::vector<DType> in_types, out_types(node->num_outputs, DType::kUnknown);
  for (const ValuePtr& input : node->inputs) {
    if (input->node && !input->node->infer_error.empty()) throw Error(input->node->infer_error);
    in_shapes.push_back(ShapeOfValue(*input));
    in_types.push_back(DTypeOfValue(*input));
  }
  try {
    NodeAttrs attrs = AttrsOf(*node);
    uint32_t expected = node->op->InputCount(attrs);
    IR_CHECK(expected == kVariadic || expected == node->inputs.size())
        << "takes " << expected << " inputs, got " << node->inputs.size();
    RunInfer<Shape, FInferShape>("FInferShape", attrs, &in_shapes, &out_shapes);
    RunInfer<DType, FInferType>("FInferType", attrs, &in_types, &out_types);
  } catch (const std::exception& err) {
    node->infer_error = StrCat("lazy: node '", node->op->name, "' (op ", node->op->name, ") with inputs ",
                               InputsText(*node), ": ", detail::CleanDmlcMessage(err.what()));
    throw Error(node->infer_error);
  }
  node->shapes = std::move(out_shapes);
  node->dtypes = std::move(out_types);
}

bool Inferred(const Pending& node) { return !node.shapes.empty() || !node.infer_error.empty(); }

/*! \brief Infers `root` and the uninferred nodes below it, inputs first (no recursion). */
void InferBelow(Pending* root) {
  std::vector<std::pair<Pending*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      Pending* input = node->inputs[next++]->node.get();
      if (input && !Inferred(*input)) stack.emplace_back(input, 0);
      continue;
    }
    Pending* done = node;
    stack.pop_back();
    if (!Inferred(*done)) InferNode(done);
  }
}

}  // namespace

bool InferPending(const Array::Value& value) {
  if (!value.node) return true;
  try {
    InferBelow(value.node.get());
  } catch (const Error&) {
    return false;
  }
  return value.node->infer_error.empty();
}

namespace {
/*! \brief The shape and dtype of `array`'s value, inferred if pending (throws when invalid). */
std::pair<Shape, DType> Infer(const Array& array) {
  ValuePtr value = ValueOf(array, "lazy::ShapeOf");
  DagLock dag(DagMutex());
  if (value->node) {
    InferBelow(value->node.get());
    if (!value->node->infer_error.empty()) throw Error(value->node->infer_error);
  }
  return {ShapeOfValue(*value), DTypeOfValue(*value)};
}
}  // namespace

Shape ShapeOf(const Array& array) {
  Shape shape = Infer(array).first;
  return shape.is_known() ? shape : array.Eval().shape();  // data-dependent: only running tells
}

DType DTypeOf(const Array& array) {
  DType dtype = Infer(array).second;
  return dtype != DType::kUnknown ? dtype : array.Eval().dtype();
}

}  // namespace lazy
}  // namespace ir
