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
    for (tensorflow::NodeDef& n : def.nodes) {
      if (n.name() == def.params[i] && tf_type != 0) {
        (*n.mutable_attr())["dtype"].set_type(static_cast<tensorflow::DataType>(tf_type));
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

Outputs ConvertWhileFrame(ImportContext& ctx) {
  size_t vars = static_cast<size_t>(ctx.Int("num_loop_vars"));
  std::shared_ptr<const Subgraph> cond, body;
  try {
    cond = ImportBody(ctx, 0, 0, vars);
    body = ImportBody(ctx, 1, 0, vars);
  } catch (const Error& err) {
    throw Error(StrCat("while frame '", ctx.Str("frame_name"), "': ", err.what()));
  }
  NodePtr loop = Node::Create(Op::Get("while_loop"), ctx.name(), {}, ctx.inputs(), {cond, body});
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

IR_TF_CONVERTER({kWhileFrameOp}, ConvertWhileFrame);
IR_TF_CONVERTER({kCondOp}, ConvertCond);
IR_TF_CONVERTER({"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
                 "RefNextIteration", "LoopCond"},
                RejectLeftover);

}  // namespace tf
}  // namespace ir
