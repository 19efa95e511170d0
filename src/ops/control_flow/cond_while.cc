/*!
 * \file cond_while.cc
 * \brief cond and while_loop: ops whose bodies are graphs (NodeAttrs::subgraphs), and the node
 * their gradient builds, _while_loop_grad.
 *
 * Bodies are closed over their params (ir/graph.h, Subgraph), so inference, gradients and the
 * executor see every value that crosses into a body as a node input. Shapes and dtypes are
 * inferred by running the InferShape / InferType passes on the bodies. The kernels
 * (FControlFlow) decide which bodies run: cond runs only the taken branch; while_loop iterates
 * in the executor. A node whose gradient node is in the same run keeps what that gradient reads
 * (a loop: the variables entering every iteration; values of nodes with effects, which never
 * run twice) and hands it over; the loop's gradient runs the body's gradient in reverse.
 * Parsing and inference through the bodies are in cond_while_infer.cc.
 */
#include <unordered_map>

#include "ir/constant.h"
#include "ir/pass.h"
#include "ir/pipeline.h"
#include "ops/control_flow/cond_while_infer.h"
#include "ops/control_flow/control_flow_gradient.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

// ---------------------------------------------------------------- kernels

/*! \brief Whether a scalar of any dtype is nonzero; `what` names it in errors. */
bool Truthy(const NodeAttrs& attrs, const char* what, const NDArray& value) {
  IR_CHECK(value.shape().Size() == 1) << NodeDesc(attrs) << ": " << what << " must be a scalar, got shape "
                                      << value.shape();
  NDArray host = value.device().type == DeviceType::kCPU ? value : value.CopyTo(Device::CPU());
  bool result = false;
  IR_ALL_TYPES_SWITCH(host.dtype(), DT, { result = host.data<DT>()[0] != DT(0); });
  return result;
}

/*!
 * \brief Runs the taken branch; its errors (a branch that cannot run on these shapes) name the node
 * and the branch. With a _cond_grad in the run, it runs that node's saving body of the branch
 * instead (bodies 2 and 3: the branch returning after its outputs the values of nodes with effects
 * that the gradient reads) and records them for it.
 */
std::vector<NDArray> CondCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                 const BodyRunner& run_body) {
  size_t branch = Truthy(attrs, "the predicate", in[0]) ? 0 : 1;
  std::vector<NDArray> args(in.begin() + 1, in.end());
  try {
    if (ctx.gradient == nullptr) return run_body(branch, args, 0, {});
    IR_CHECK(ctx.gradient->op->name == "_cond_grad" && ctx.gradient->subgraphs.size() == 4)
        << NodeDesc(attrs) << ": " << NodeDesc(*ctx.gradient) << " reads its record but is not its _cond_grad";
    BodyCall call;
    call.index = branch;
    call.body = ctx.gradient->subgraphs[2 + branch].get();
    call.args = args;
    call.output_gradients = SavedValueReaders(*ctx.gradient->subgraphs[branch], *call.body, NumResults(attrs, 0));
    BodyResult result = run_body.Run(call);
    auto runs = std::make_shared<SavedRuns>();
    runs->bodies.push_back(branch);
    runs->saved.push_back(SplitSaved(&result, NumResults(attrs, 0)));
    *ctx.record = runs;
    return std::move(result.outputs);
  } catch (const Error& err) {
    std::vector<Shape> shapes;
    for (const NDArray& a : args) shapes.push_back(a.shape());
    throw Error(StrCat(NodeDesc(attrs), ": ", branch == 0 ? "then_branch" : "else_branch", " (body ", branch,
                       ", taken) on arguments of shapes [", ir::Join(shapes, ", "), "]: ", err.what()));
  }
}

/*!
 * \brief `args` with each one flagged in `donate` made the caller's own: copied when `copy_all` (it
 * still belongs to the graph) or when it overlaps another argument or an array in `kept`.
 */
std::vector<NDArray> OwnedCopies(std::vector<NDArray> args, const std::vector<bool>& donate, bool copy_all,
                                 const std::vector<NDArray>& kept) {
  auto overlaps = [](const NDArray& a, const NDArray& b) { return b.defined() && a.Overlaps(b); };
  for (size_t i = 0; i < args.size(); ++i) {
    if (!donate[i]) continue;
    bool shared = copy_all;
    for (size_t j = 0; j < args.size() && !shared; ++j) shared = j != i && overlaps(args[i], args[j]);
    for (size_t j = 0; j < kept.size() && !shared; ++j) shared = overlaps(args[i], kept[j]);
    if (shared) args[i] = args[i].CopyTo(args[i].device());
  }
  return args;
}

/*! \brief A loop's final variables and, when asked for, what its gradient reads of each iteration. */
struct LoopRun {
  std::vector<NDArray> vars;
  std::shared_ptr<SavedRuns> record;
};

/*!
 * \brief Runs the loop on `vars`. Iteration k runs its bodies with key k. The body may update the
 * variables flagged in `donate` in place (the loop owns copies of the entering values). With
 * `keep`, the variables it flags are recorded per iteration (the others recorded as undefined):
 * those are never donated. When `grad` (the _while_loop_grad keeping them) has a saving body (body
 * 3: saved values after the variables), that body runs instead and the values are recorded too.
 */
LoopRun RunLoop(const NodeAttrs& attrs, std::vector<NDArray> vars, const BodyRunner& run_body,
                const std::vector<bool>& donate, const std::vector<bool>* keep, const NodeAttrs* grad = nullptr) {
  int64_t limit = dmlc::get<WhileParam>(attrs.parsed).maximum_iterations;
  bool donating = std::find(donate.begin(), donate.end(), true) != donate.end();
  const size_t n = vars.size();
  const Subgraph* saving = grad != nullptr && grad->subgraphs.size() == 4 ? grad->subgraphs[3].get() : nullptr;
  std::vector<const NodeAttrs*> readers;
  if (saving != nullptr) readers = SavedValueReaders(*grad->subgraphs[2], *saving, n);
  LoopRun loop;
  if (keep != nullptr) loop.record = std::make_shared<SavedRuns>();
  for (uint64_t k = 0; limit < 0 || k < static_cast<uint64_t>(limit); ++k) {
    if (!Truthy(attrs, "the loop condition's result", run_body(0, vars, k, {}).at(0))) break;
    if (keep != nullptr) {
      loop.record->history.emplace_back(n);
      for (size_t i = 0; i < n; ++i) {
        if ((*keep)[i]) loop.record->history.back()[i] = vars[i];
      }
    }
    if (donating) vars = OwnedCopies(std::move(vars), donate, k == 0, keep ? loop.record->history.back() : vars);
    BodyCall call;
    call.index = 1;
    call.body = saving;
    call.args = std::move(vars);
    call.key = k;
    call.donate = donate;
    call.output_gradients = readers;
    BodyResult result = run_body.Run(call);
    if (saving != nullptr) loop.record->saved.push_back(SplitSaved(&result, n));
    vars = std::move(result.outputs);
  }
  loop.vars = std::move(vars);
  return loop;
}

/*! \brief Per loop variable, whether body 2 (the body's gradient) of _while_loop_grad `grad` reads it. */
std::vector<bool> GradientReads(const NodeAttrs& grad, size_t n) {
  const Subgraph& gradient = Body(grad, 2);
  const IndexedGraph& gidx = gradient.graph.indexed_graph();
  std::vector<bool> keep(n);
  for (size_t i = 0; i < n; ++i) keep[i] = gidx.has_node(gradient.params[i].get());
  return keep;
}

/*!
 * \brief The loop variables the loop may donate to its body: those `kept` does not flag, except
 * loop invariants (the body returns the param itself). An invariant is never written, and not
 * copying it keeps a variable that enters the loop the variable's own storage: a read of it in the
 * body after an assign in the body (ordered by a control edge) sees the update, as in TensorFlow.
 */
std::vector<bool> Donated(const NodeAttrs& attrs, const std::vector<bool>& kept) {
  const Subgraph& body = Body(attrs, 1);
  std::vector<bool> donate(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    const NodeEntry& out = body.graph.outputs[i];
    donate[i] = !kept[i] && !(out.node == body.params[i] && out.index == 0);
  }
  return donate;
}

/*!
 * \brief Runs the loop. With its _while_loop_grad in the run, it also records the variables
 * entering each iteration that the gradient reads (the others, a TensorArray being written,
 * say, are updated in place and not kept) and the values it saves (its body 3, when it has one).
 */
std::vector<NDArray> WhileCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                  const BodyRunner& run_body) {
  if (ctx.gradient == nullptr) {
    return RunLoop(attrs, in, run_body, Donated(attrs, std::vector<bool>(in.size(), false)), nullptr).vars;
  }
  const NodeAttrs& grad = *ctx.gradient;
  IR_CHECK(grad.op->name == "_while_loop_grad")
      << NodeDesc(attrs) << ": " << NodeDesc(grad) << " reads its record but is not its _while_loop_grad";
  std::vector<bool> keep = GradientReads(grad, in.size());
  LoopRun loop = RunLoop(attrs, in, run_body, Donated(attrs, keep), &keep, &grad);
  *ctx.record = loop.record;
  return std::move(loop.vars);
}

/*!
 * \brief The body's gradient from the last iteration to the first, on what the forward loop
 * recorded (the same keys: random ops draw what the loop drew). The gradients are updated in
 * place iteration to iteration. Without a record (the loop was fed, or rewritten, as vectorizing
 * a pfor does), a loop without effects runs again here to record it.
 */
std::vector<NDArray> WhileGradCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                      const BodyRunner& run_body) {
  size_t n = NumParams(attrs, 1);
  SavedRuns* runs = ForwardRuns(ctx, attrs);
  std::shared_ptr<SavedRuns> own;
  if (runs == nullptr) {
    IR_CHECK(!BodyHasEffects(Body(attrs, 0)) && !BodyHasEffects(Body(attrs, 1)))
        << NodeDesc(attrs) << ": what its while_loop recorded did not reach it (is the loop's output fed?), and "
        << "running the loop again would repeat its effects (assign, host callback, collective)";
    std::vector<bool> keep = GradientReads(attrs, n);
    own =
        RunLoop(attrs, std::vector<NDArray>(in.begin(), in.begin() + n), run_body, Donated(attrs, keep), &keep).record;
    runs = own.get();
  }
  const bool exclusive = own != nullptr || ctx.forward.use_count() == 1;  // the record may be consumed
  std::vector<NDArray> grads(in.begin() + n, in.begin() + 2 * n);
  std::vector<bool> donate_grads(2 * n, false);
  std::fill(donate_grads.begin() + n, donate_grads.end(), true);
  const size_t iterations = runs->history.size();
  for (size_t k = iterations; k-- > 0;) {
    BodyCall call;
    call.index = 2;
    call.key = k;
    call.args = exclusive ? std::move(runs->history[k]) : runs->history[k];
    call.args.insert(call.args.end(), grads.begin(), grads.end());
    call.args = OwnedCopies(std::move(call.args), donate_grads, k + 1 == iterations, {});
    call.donate = donate_grads;
    if (k < runs->saved.size()) {
      const BodyResult& saved = runs->saved[k];
      call.args.insert(call.args.end(), saved.outputs.begin(), saved.outputs.end());
      call.records.assign(2 * n, nullptr);
      call.records.insert(call.records.end(), saved.records.begin(), saved.records.end());
    }
    grads = run_body.Run(call).outputs;
    if (exclusive && k < runs->saved.size()) runs->saved[k] = BodyResult();
  }
  return grads;
}

// ---------------------------------------------------------------- gradients

/*!
 * \brief Throws when the gradient of loop `node` reads a variable entering the loop that its body
 * assigns: the body reads the variable's current value (the loop does not copy it), which no
 * recorded history of the loop holds per iteration.
 */
void CheckGradientReadsNoWrittenVariable(const Node& node, const Subgraph& gradient) {
  std::set<std::string> written = WrittenVariables(Body(node.attrs, 1));
  std::set<std::string> in_cond = WrittenVariables(Body(node.attrs, 0));
  written.insert(in_cond.begin(), in_cond.end());
  const IndexedGraph& idx = gradient.graph.indexed_graph();
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Node& input = *node.inputs[i].node;
    IR_CHECK(!input.is_variable() || !written.count(input.attrs.name) || !idx.has_node(gradient.params[i].get()))
        << "cannot differentiate through " << NodeDesc(node.attrs) << ": its body assigns variable '"
        << input.attrs.name << "' and reads it (loop variable " << i
        << "), so the value each iteration read is not the one the loop entered with";
  }
}

std::vector<NodeEntry> WhileGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  const NodeAttrs& attrs = node->attrs;
  const WhileParam& param = dmlc::get<WhileParam>(attrs.parsed);
  IR_CHECK(param.back_prop) << "cannot differentiate through " << NodeDesc(attrs)
                            << ": it was built with back_prop=false";
  std::vector<NodeEntry> inputs = node->inputs;
  inputs.insert(inputs.end(), ograds.begin(), ograds.end());
  inputs.push_back(Out(node, 0));  // what the loop records for this node
  BodyGradient body_grad = GradientBody(Body(attrs, 1), attrs.name + "_grad");
  CheckGradientReadsNoWrittenVariable(*node, *body_grad.gradient);
  std::vector<std::shared_ptr<const Subgraph>> bodies{attrs.subgraphs[0], attrs.subgraphs[1], body_grad.gradient};
  if (body_grad.forward != nullptr) bodies.push_back(body_grad.forward);
  NodePtr grad = Node::Create(
      Op::Get("_while_loop_grad"), attrs.name + "_grad",
      {{"maximum_iterations", std::to_string(param.maximum_iterations)}, {"shape_invariants", param.shape_invariants}},
      std::move(inputs), std::move(bodies));
  std::vector<NodeEntry> result;
  for (uint32_t i = 0; i < node->inputs.size(); ++i) result.push_back(Out(grad, i));
  return result;
}

// ---------------------------------------------------------------- folding known inputs

/*! \brief A cond whose predicate is known becomes its taken branch, inlined. */
std::vector<NodeEntry> InlineKnownCond(const NodePtr& node, const std::vector<NDArray>& values) {
  if (!values.at(0).defined()) return {};
  const NodeAttrs& attrs = node->attrs;
  std::vector<NodeEntry> args(node->inputs.begin() + 1, node->inputs.end());
  return InlineSubgraph(Body(attrs, Truthy(attrs, "the predicate", values[0]) ? 0 : 1), args, attrs.name);
}

/*!
 * \brief The loop condition's value on the entering variables when the known ones determine it
 * (the condition body, known inputs as constants, folds to a constant), else an undefined array.
 */
NDArray KnownCondition(const NodePtr& node, const std::vector<NDArray>& values) {
  std::vector<NodeEntry> args;
  for (size_t i = 0; i < values.size(); ++i) {
    std::string name = StrCat(node->attrs.name, "/entering_", i);
    args.push_back(values[i].defined() ? MakeConstantNode(name, values[i]) : NodeEntry{Node::CreateVariable(name), 0});
  }
  Graph g(InlineSubgraph(Body(node->attrs, 0), args, node->attrs.name));
  g = ApplyPasses(std::move(g), Pipeline("fold_constants").Passes());
  return ConstantNodeValue(*g.outputs.at(0).node);
}

/*! \brief A while_loop that runs no iteration (its condition known false, or no iterations allowed) is its inputs. */
std::vector<NodeEntry> InlineZeroTripLoop(const NodePtr& node, const std::vector<NDArray>& values) {
  const NodeAttrs& attrs = node->attrs;
  if (dmlc::get<WhileParam>(attrs.parsed).maximum_iterations != 0) {
    NDArray known = KnownCondition(node, values);
    if (!known.defined() || Truthy(attrs, "the loop condition's result", known)) return {};
  }
  return node->inputs;
}

}  // namespace

IR_REGISTER_OP(cond)
    .describe("then_branch(args) if pred else else_branch(args); only the taken branch runs (bodies 0 and 1).")
    .set_num_inputs([](const NodeAttrs& attrs) { return 1 + NumParams(attrs, 0); })
    .set_num_outputs([](const NodeAttrs& attrs) { return NumResults(attrs, 0); })
    .set_attr_parser(ParseCond)
    .set_attr<FInferShape>("FInferShape", CondShape)
    .set_attr<FInferType>("FInferType", CondType)
    .set_attr<FControlFlow>("FControlFlow", CondCompute)
    .set_attr<FInlineConstantInputs>("FInlineConstantInputs", InlineKnownCond)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(while_loop)
    .describe("vars = body(vars) while cond(vars) (bodies 0 and 1), at most maximum_iterations times; returns vars.")
    .set_num_inputs([](const NodeAttrs& attrs) { return NumParams(attrs, 1); })
    .set_num_outputs([](const NodeAttrs& attrs) { return NumParams(attrs, 1); })
    .set_param<WhileParam>()
    .set_attr_parser(ParseWhile)
    .set_attr<FInferShape>("FInferShape", WhileShape)
    .set_attr<FInferType>("FInferType", WhileType)
    .set_attr<FControlFlow>("FControlFlow", WhileCompute)
    .set_attr<FGradient>("FGradient", WhileGradient)
    .set_attr<FInlineConstantInputs>("FInlineConstantInputs", InlineZeroTripLoop)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(_while_loop_grad)
    .describe(
        "Gradient of a while_loop: inputs (vars, output gradients, the loop's output 0); runs body 2 (the "
        "body's gradient) from the last iteration back on what the loop recorded of each iteration (the vars "
        "body 2 reads, the values body 3 saves); returns the vars' gradients.")
    .set_num_inputs([](const NodeAttrs& attrs) { return 2 * NumParams(attrs, 1) + 1; })
    .set_num_outputs([](const NodeAttrs& attrs) { return NumParams(attrs, 1); })
    .set_param<WhileParam>()
    .set_attr_parser(ParseWhile)
    .set_attr<FInferShape>("FInferShape", WhileShape)
    .set_attr<FInferType>("FInferType", WhileType)
    .set_attr<FControlFlow>("FControlFlow", WhileGradCompute)
    .set_attr<FForwardInput>("FForwardInput",
                             [](const NodeAttrs&, uint32_t num_inputs) { return static_cast<int>(num_inputs) - 1; })
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
