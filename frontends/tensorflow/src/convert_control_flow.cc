/*!
 * \file convert_control_flow.cc
 * \brief Converters of the nodes functionalize_*.cc rebuilds from TF1 control flow: each body
 * is imported by a GraphImporter of its own (which rebuilds the control flow nested in it) and
 * becomes a Subgraph of our `while_loop` / `cond`. TF1 control-flow ops left over after the
 * rebuild get an error saying why.
 */
#include "converter.h"
#include "functionalize.h"
#include "graph_importer.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

/*! \brief The TF DataType number of our `dtype` (0 when TF has none). */
int ToTFType(DType dtype) {
  for (int t = 1; t < 32; ++t) {
    try {
      if (ToDType(t) == dtype) return t;
    } catch (const Error&) {
    }
  }
  return 0;
}

/*! \brief Param nodes of an imported body, by name (a param the body does not read is made here). */
std::vector<NodePtr> FindParams(const Graph& g, const std::vector<std::string>& names) {
  std::map<std::string, NodePtr> found;
  PostOrderDFSVisit(g.outputs, [&](const NodePtr& n) {
    if (n->is_variable()) found.emplace(n->attrs.name, n);
  });
  std::vector<NodePtr> params;
  for (const std::string& name : names) {
    auto it = found.find(name);
    params.push_back(it != found.end() ? it->second : Node::CreateVariable(name));
  }
  return params;
}

/*!
 * \brief Body `k` of the rebuilt node as a Subgraph. Param i takes input `offset + i`: its dtype,
 * and its shape when i >= `shaped_from` (loop variables may change shape, so they get none).
 */
std::shared_ptr<const Subgraph> ImportBody(ImportContext& ctx, int k, size_t offset, size_t shaped_from) {
  NestingGuard guard(StrCat("node '", ctx.name(), "'"));
  BodyDef def = DecodeBody(ctx.def(), k);
  IR_CHECK(offset + def.params.size() == ctx.num_inputs())
      << "body " << k << " has " << def.params.size() << " params for " << ctx.num_inputs() - offset << " values";
  ImportSpec spec;
  spec.outputs = def.outputs;
  spec.producer = ctx.producer();
  spec.max_const_bytes = ctx.max_const_bytes();
  for (size_t i = 0; i < def.params.size(); ++i) {
    int tf_type = ToTFType(ctx.InputType(offset + i));
    for (tfproto::NodeDef& n : def.nodes) {
      if (n.name() == def.params[i] && tf_type != 0) {
        (*n.mutable_attr())["dtype"].set_type(static_cast<tfproto::DataType>(tf_type));
      }
    }
    Shape shape = i >= shaped_from ? ctx.InputShape(offset + i) : Shape();
    if (shape.rank_known()) spec.feed_shapes[def.params[i]] = shape;
  }
  std::vector<std::string> names;
  Graph g = GraphImporter(std::move(def.nodes), spec).Import(&names);
  auto body = std::make_shared<Subgraph>();
  body->params = FindParams(g, def.params);
  body->graph.outputs = g.outputs;
  return body;
}

/*! \brief Whether `e` is an array holding nothing (0 element dimensions) that an iteration makes `after`. */
bool WritesUnwritten(const Shape& e, const Shape& after) {
  if (!e.rank_known() || e.ndim() < 2 || e[0] == kUnknownDim || !after.rank_known() || after.ndim() < 1) return false;
  bool unwritten = false, any_rank = e.ndim() == 2 && e[1] == 0;
  for (int d = 1; d < e.ndim(); ++d) unwritten = unwritten || e[d] == 0;
  if (!unwritten || (!any_rank && after.ndim() != e.ndim())) return false;
  for (int d = 1; d < after.ndim(); ++d) {
    if (after[d] == kUnknownDim || (!any_rank && e[d] != 0 && e[d] != after[d])) return false;
  }
  return after.ndim() != e.ndim() || std::vector<int64_t>(e.dims().begin() + 1, e.dims().end()) !=
                                         std::vector<int64_t>(after.dims().begin() + 1, after.dims().end());
}

/*! \brief Whether input `i` is a constant scalar 0. */
bool IsScalarZero(ImportContext& ctx, size_t i) {
  NDArray value = ctx.TryConstInput(i);
  return value.defined() && value.shape().ndim() == 0 && ctx.ConstScalar(i) == 0;
}

/*!
 * \brief The loop's entering values, each that holds nothing but zeros the body widens replaced by
 * zeros of the shape an iteration gives it (so the loop variable keeps its shape): an array of 0
 * element dimensions (a TensorArray or stack before its first write: its rows, the element shape
 * the body writes), and a constant scalar 0 an iteration broadcasts (TF's gradients start a
 * TensorArray flow's accumulator so). The loop computes the same values (a loop that runs no
 * iteration returns the widened zeros).
 */
std::vector<NodeEntry> WidenEntering(ImportContext& ctx, const Subgraph& body, size_t vars,
                                     std::vector<Shape>* entering) {
  std::vector<NodeEntry> inputs = ctx.inputs();
  std::vector<Shape>& shapes = *entering;
  for (size_t i = 0; i < inputs.size(); ++i) shapes.push_back(ctx.InputShape(i));
  for (size_t pass = 0; pass <= vars; ++pass) {
    std::vector<Shape> after;
    try {
      after = InferSubgraphShapes(body, shapes, StrCat("node '", ctx.name(), "'"));
    } catch (const Error&) {
      return inputs;  // the loop's own inference reports it
    }
    bool changed = false;
    for (size_t i = 0; i < vars; ++i) {
      std::vector<int64_t> dims;
      if (WritesUnwritten(shapes[i], after[i])) {
        dims = after[i].dims();
        dims[0] = shapes[i][0];
      } else if (shapes[i].rank_known() && shapes[i].ndim() == 0 && after[i].is_known() && after[i].ndim() > 0 &&
                 IsScalarZero(ctx, i)) {
        dims = after[i].dims();
      } else {
        continue;
      }
      inputs[i] =
          ctx.Op("fill", {}, {{"shape", IntsAttr(dims)}, {"value", "0"}, {"dtype", DTypeName(ctx.InputType(i))}},
                 StrCat("entering_", i));
      shapes[i] = Shape(dims);
      changed = true;
    }
    if (!changed) break;
  }
  return inputs;
}

/*!
 * \brief The loop's shape_invariants when an iteration leaves a dimension of a loop variable
 * unknown that it entered with (a stack or a TensorArray of dynamic_size growing, an op whose
 * output shape is a value): the loop variables' shapes across iterations, every dimension an
 * iteration changes or leaves unknown unknown. "" when no iteration does (the loop infers them).
 */
std::string UnknownAcrossIterations(const Subgraph& body, std::vector<Shape> shapes, const std::string& where) {
  bool lost = false;
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Shape> after;
    try {
      after = InferSubgraphShapes(body, shapes, where);
    } catch (const Error&) {
      return "";  // the loop's own inference reports it
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      Shape& v = shapes[i];
      if (!v.rank_known()) continue;
      if (!after[i].rank_known() || after[i].ndim() != v.ndim()) {
        lost = lost || !after[i].rank_known();
        v = Shape();
        changed = true;
        continue;
      }
      for (int d = 0; d < v.ndim(); ++d) {
        if (v[d] == after[i][d] || v[d] == kUnknownDim) continue;
        lost = lost || after[i][d] == kUnknownDim;
        v[d] = kUnknownDim;
        changed = true;
      }
    }
  }
  if (!lost) return "";
  std::vector<std::string> texts;
  for (const Shape& shape : shapes) texts.push_back(shape.ToString());
  return "[" + Join(texts, ",") + "]";
}

Outputs ConvertWhileFrame(ImportContext& ctx) {
  size_t vars = static_cast<size_t>(ctx.Int("num_loop_vars"));
  std::shared_ptr<const Subgraph> cond, body;
  try {
    cond = ImportBody(ctx, 0, 0, vars);
    body = ImportBody(ctx, 1, 0, vars);
  } catch (const Error& err) {
    throw Error(StrCat("while frame '", ctx.Str("frame_name"), "': ", err.what()));
  }
  std::vector<Shape> entering;
  std::vector<NodeEntry> inputs = WidenEntering(ctx, *body, vars, &entering);
  std::string invariants = UnknownAcrossIterations(*body, entering, StrCat("node '", ctx.name(), "'"));
  std::map<std::string, std::string> attrs;
  if (!invariants.empty()) attrs["shape_invariants"] = invariants;
  NodePtr loop = Node::Create(Op::Get("while_loop"), ctx.name(), attrs, std::move(inputs), {cond, body});
  Outputs outs;
  for (uint32_t i = 0; i < ctx.num_inputs(); ++i) outs.push_back(NodeEntry{loop, i});
  return outs;
}

Outputs ConvertCond(ImportContext& ctx) {
  Shape shape = ctx.InputShape(0);
  DType dtype = ctx.InputType(0);
  IR_CHECK((dtype == DType::kBool || dtype == DType::kUnknown) && (!shape.rank_known() || shape.ndim() == 0))
      << "Switch '" << ctx.Str("pred_switch") << "': its predicate '" << ctx.def().input(0)
      << "' must be a scalar bool, but it is " << DTypeName(dtype) << " " << shape;
  auto then_branch = ImportBody(ctx, 0, 1, 0);
  auto else_branch = ImportBody(ctx, 1, 1, 0);
  NodePtr cond = Node::Create(Op::Get("cond"), ctx.name(), {}, ctx.inputs(), {then_branch, else_branch});
  Outputs outs;
  for (uint32_t i = 0; i < then_branch->graph.outputs.size(); ++i) outs.push_back(NodeEntry{cond, i});
  return outs;
}

Outputs RejectLeftover(ImportContext& ctx) {
  ctx.Fail(
      "this TF1 control-flow node is not part of a while frame (Enter -> Merge(Enter, NextIteration) -> "
      "Switch(Merge, LoopCond) -> Exit) or of a cond (Switch -> ... -> Merge) that could be rebuilt");
}

}  // namespace

/*! \brief ControlTrigger (a TF1 gradient loop's `b_sync`): runs when its control inputs have, as a no_op. */
Outputs ConvertControlTrigger(ImportContext& ctx) { return {ctx.Op("no_op", {})}; }

IR_TF_CONVERTER({kWhileFrameOp}, ConvertWhileFrame);
IR_TF_CONVERTER({"ControlTrigger"}, ConvertControlTrigger);
IR_TF_CONVERTER({kCondOp}, ConvertCond);
IR_TF_CONVERTER({"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
                 "RefNextIteration", "LoopCond"},
                RejectLeftover);

}  // namespace tf
}  // namespace ir
