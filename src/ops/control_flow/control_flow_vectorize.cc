/*!
 * \file control_flow_vectorize.cc
 * \brief Converters (FVectorize) of cond and while_loop inside pfor bodies, and the op they
 * need, _pfor_cond.
 *
 * A branch or loop body runs per iteration as a pfor over "rows": its stacked arguments are read
 * at the pfor's index, so the executor's pipeline vectorizes it when it binds the body.
 * - cond, predicate unstacked: a cond whose branches are such pfors over the n iterations.
 * - cond, predicate stacked: _pfor_cond, as TF's pfor does it: its kernel partitions the
 *   iterations by the predicate, runs each branch on the rows of its iterations only (a branch
 *   that would give NaN or raise for the other iterations never sees them), and stitches the
 *   results back in iteration order. How many iterations take a branch is known only at run
 *   time, so each branch's pfor takes its count from the rows it is given.
 * - while_loop, some variable stacked: a loop over the stacked variables that runs while any
 *   iteration's condition holds; its body keeps the variables of the finished iterations
 *   (masking), so every iteration ends with what the loop gives it. The body still computes
 *   the finished iterations (their results are dropped). Gradients of such a loop are not
 *   supported: Vectorize runs after the gradient graph is built.
 */
#include <map>
#include <string>
#include <vector>

#include "ir/pass.h"
#include "ir/vectorize.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

std::string ShapeText(const std::vector<int64_t>& dims) { return StrCat(IntList(dims)); }

/*!
 * \brief The outputs of a pfor running `body` per iteration on `args`: iteration i reads row i of
 * the args flagged in `stacked`, the others as they are. With n >= 0 it runs n iterations; with
 * n < 0 as many as `args.back()` (then flagged stacked) has rows.
 */
std::vector<NodeEntry> RowsPfor(const Subgraph& body, const std::vector<NodeEntry>& args,
                                const std::vector<bool>& stacked, int64_t n, const std::string& name) {
  auto inner = std::make_shared<Subgraph>();
  NodePtr index = Node::CreateVariable(name + "/index", {{"__dtype__", "int32"}, {"__shape__", "()"}});
  inner->params.push_back(index);
  std::vector<NodeEntry> rows;
  for (size_t j = 0; j < args.size(); ++j) {
    NodePtr param = Node::CreateVariable(StrCat(name, "/arg_", j));
    inner->params.push_back(param);
    NodeEntry row{param, 0};
    if (j >= body.params.size()) continue;  // an extra arg (the rows' iteration ids) only counts the iterations
    if (stacked[j]) row = MakeNode("gather", StrCat(name, "/row_", j), {row, NodeEntry{index, 0}});
    rows.push_back(row);
  }
  inner->graph.outputs = InlineSubgraph(body, rows, name + "/body");
  std::map<std::string, std::string> dict{{"n", std::to_string(n)}};
  if (n < 0) dict["n_from"] = std::to_string(args.size() - 1);
  NodePtr loop = Node::Create(Op::Get("pfor"), name, dict, args, {inner});
  std::vector<NodeEntry> outs;
  for (uint32_t j = 0; j < loop->num_outputs(); ++j) outs.push_back(NodeEntry{loop, j});
  return outs;
}

/*! \brief A body over `count` fresh params (named `name`/p<j>) returning fn(params). */
std::shared_ptr<const Subgraph> MakeBody(const std::string& name, size_t count,
                                         const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& fn) {
  auto body = std::make_shared<Subgraph>();
  std::vector<NodeEntry> params;
  for (size_t j = 0; j < count; ++j) {
    body->params.push_back(Node::CreateVariable(StrCat(name, "/p", j)));
    params.push_back(NodeEntry{body->params.back(), 0});
  }
  body->graph.outputs = fn(params);
  return body;
}

/*!
 * \brief `branch` as a body running it per iteration over rows (see RowsPfor). With n < 0 the body
 * takes one more param, the iterations' ids, whose length is the count.
 */
std::shared_ptr<const Subgraph> RowsBody(const Subgraph& branch, std::vector<bool> stacked, int64_t n,
                                         const std::string& name) {
  if (n < 0) stacked.push_back(true);
  return MakeBody(name, stacked.size(),
                  [&](const std::vector<NodeEntry>& p) { return RowsPfor(branch, p, stacked, n, name + "/pfor"); });
}

std::vector<bool> StackedArgs(const PforContext& ctx, size_t first) {
  std::vector<bool> stacked;
  for (size_t j = first; j < ctx.num_inputs(); ++j) stacked.push_back(ctx.stacked(j));
  return stacked;
}

std::vector<NodeEntry> Entries(const PforContext& ctx, size_t first) {
  std::vector<NodeEntry> entries;
  for (size_t j = first; j < ctx.num_inputs(); ++j) entries.push_back(ctx.input(j).entry);
  return entries;
}

std::vector<PforValue> AllStacked(const NodePtr& node) {
  std::vector<PforValue> outs;
  for (uint32_t j = 0; j < node->num_outputs(); ++j) outs.push_back(PforValue{NodeEntry{node, j}, true});
  return outs;
}

// ---------------------------------------------------------------- cond

std::string StackedText(const std::vector<bool>& stacked) {
  std::string text;
  for (bool s : stacked) text += s ? '1' : '0';
  return text;
}

/*! \brief cond: pfor branches under the unstacked predicate, else _pfor_cond (see the file comment). */
std::vector<PforValue> CondVectorize(PforContext& ctx) {
  const NodeAttrs& attrs = ctx.attrs();
  const std::vector<bool> stacked = StackedArgs(ctx, 1);
  const std::string name = StrCat(ctx.prefix(), "/", attrs.name);
  auto branches = [&](int64_t n) {
    return std::vector<std::shared_ptr<const Subgraph>>{RowsBody(*attrs.subgraphs[0], stacked, n, name + "/then"),
                                                        RowsBody(*attrs.subgraphs[1], stacked, n, name + "/else")};
  };
  std::vector<NodeEntry> inputs = Entries(ctx, 1);
  if (!ctx.stacked(0)) {
    inputs.insert(inputs.begin(), ctx.input(0).entry);
    return AllStacked(Node::Create(Op::Get("cond"), name + "/cond", {}, std::move(inputs), branches(ctx.n())));
  }
  NodeEntry pred = ctx.input(0).entry;  // [n] + a per-iteration shape of one element
  if (ctx.in_shape(0).ndim() != 0) pred = ctx.Make("reshape", {pred}, {{"shape", ShapeText({ctx.n()})}});
  inputs.insert(inputs.begin(), pred);
  return AllStacked(Node::Create(Op::Get("_pfor_cond"), name + "/pfor_cond", {{"stacked", StackedText(stacked)}},
                                 std::move(inputs), branches(-1)));
}

struct PforCondParam : public dmlc::Parameter<PforCondParam> {
  std::string stacked;
  DMLC_DECLARE_PARAMETER(PforCondParam) {
    DMLC_DECLARE_FIELD(stacked).describe("Per branch argument, 1 when it has a row per iteration, else 0.");
  }
};
DMLC_REGISTER_PARAMETER(PforCondParam);

void ParsePforCond(NodeAttrs* attrs) {
  ParamParser<PforCondParam>(attrs);
  IR_CHECK(attrs->subgraphs.size() == 2) << NodeDesc(*attrs) << " needs 2 bodies, got " << attrs->subgraphs.size();
  const std::string& stacked = dmlc::get<PforCondParam>(attrs->parsed).stacked;
  for (const auto& body : attrs->subgraphs) {
    IR_CHECK(body->params.size() == stacked.size() + 1)
        << NodeDesc(*attrs) << ": a body takes " << body->params.size() << " params; expected the " << stacked.size()
        << " branch arguments and the iteration ids";
  }
}

void Assign(const NodeAttrs& attrs, const std::string& what, Shape* slot, const Shape& value) {
  if (value.rank_known()) AssignShape(attrs, what, slot, value);
}
void Assign(const NodeAttrs& attrs, const std::string& what, DType* slot, DType value) {
  AssignType(attrs, what, slot, value);
}

/*! \brief Shapes or dtypes of the outputs: each body's, given the args and the ids of all iterations. */
template <typename T, typename Infer>
bool PforCondInfer(const NodeAttrs& attrs, std::vector<T>* in, std::vector<T>* out, const T& ids, Infer infer) {
  std::vector<T> args(in->begin() + 1, in->end());
  args.push_back(ids);
  for (size_t k = 0; k < 2; ++k) {
    std::vector<T> per = infer(*attrs.subgraphs[k], args, StrCat(NodeDesc(attrs), ": in body ", k));
    for (size_t j = 0; j < out->size(); ++j) Assign(attrs, StrCat("output ", j, " (body ", k, ")"), &(*out)[j], per[j]);
  }
  return AllKnown(*in, *out);
}

bool PforCondShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& pred = (*in)[0];
  IR_CHECK(!pred.rank_known() || pred.ndim() == 1)
      << NodeDesc(attrs) << ": the predicate must be a vector (one per iteration), got " << pred;
  Shape ids = pred.rank_known() ? pred : Shape::UnknownDims(1);
  return PforCondInfer(attrs, in, out, ids, InferSubgraphShapes);
}

bool PforCondType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  return PforCondInfer(attrs, in, out, DType::kInt32, InferSubgraphTypes);
}

/*! \brief The rows `ids` of `a` (on a's device), runs of consecutive ids copied at once. */
NDArray TakeRows(const NDArray& a, const std::vector<int32_t>& ids) {
  Shape shape = a.shape();
  shape[0] = static_cast<int64_t>(ids.size());
  NDArray rows(shape, a.dtype(), a.device());
  for (size_t pos = 0; pos < ids.size();) {
    size_t end = pos + 1;
    while (end < ids.size() && ids[end] == ids[end - 1] + 1) ++end;
    rows.Slice(pos, end).CopyFrom(a.Slice(ids[pos], ids[pos] + static_cast<int64_t>(end - pos)));
    pos = end;
  }
  return rows;
}

/*! \brief Writes row r of `rows` into row ids[r] of `dst`. */
void PutRows(const NDArray& rows, const std::vector<int32_t>& ids, const NDArray& dst) {
  for (size_t pos = 0; pos < ids.size();) {
    size_t end = pos + 1;
    while (end < ids.size() && ids[end] == ids[end - 1] + 1) ++end;
    dst.Slice(ids[pos], ids[pos] + static_cast<int64_t>(end - pos)).CopyFrom(rows.Slice(pos, end));
    pos = end;
  }
}

/*! \brief Iterations taking the then branch (side 0) and the else branch (side 1). */
std::vector<std::vector<int32_t>> Partition(const NDArray& pred) {
  NDArray host = pred.device().type == DeviceType::kCPU ? pred : pred.CopyTo(Device::CPU());
  std::vector<std::vector<int32_t>> sides(2);
  IR_ALL_TYPES_SWITCH(host.dtype(), DT, {
    const DT* p = host.data<DT>();
    for (int64_t i = 0; i < host.Size(); ++i) sides[p[i] != DT(0) ? 0 : 1].push_back(static_cast<int32_t>(i));
  });
  return sides;
}

std::vector<NDArray> PforCondCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                     const BodyRunner& run_body) {
  const std::string& stacked = dmlc::get<PforCondParam>(attrs.parsed).stacked;
  std::vector<Shape> in_shapes, out_shapes(attrs.subgraphs[0]->graph.outputs.size());
  std::vector<DType> in_types, out_types(out_shapes.size(), DType::kUnknown);
  for (const NDArray& a : in) in_shapes.push_back(a.shape()), in_types.push_back(a.dtype());
  PforCondShape(attrs, &in_shapes, &out_shapes);
  PforCondType(attrs, &in_types, &out_types);
  std::vector<NDArray> results;
  for (size_t j = 0; j < out_shapes.size(); ++j) results.emplace_back(out_shapes[j], out_types[j], ctx.device);
  std::vector<std::vector<int32_t>> sides = Partition(in[0]);
  for (size_t side = 0; side < 2; ++side) {
    const std::vector<int32_t>& ids = sides[side];
    if (ids.empty()) continue;  // a branch no iteration takes does not run
    std::vector<NDArray> args;
    for (size_t j = 0; j < stacked.size(); ++j)
      args.push_back(stacked[j] == '1' ? TakeRows(in[1 + j], ids) : in[1 + j]);
    NDArray id_array = NDArray::FromVector<int32_t>(Shape{static_cast<int64_t>(ids.size())}, ids);
    args.push_back(ctx.device.type == DeviceType::kCPU ? id_array : id_array.CopyTo(ctx.device));
    std::vector<NDArray> outs = run_body(side, args, side, {});
    for (size_t j = 0; j < outs.size(); ++j) PutRows(outs[j], ids, results[j]);
  }
  return results;
}

/*!
 * \brief _pfor_cond inside an outer pfor (nested pfors): one _pfor_cond over the (outer, inner)
 * iterations merged. It declines when an argument the branches read whole differs per outer
 * iteration (its bodies would need another argument read by rows).
 */
std::vector<PforValue> PforCondVectorize(PforContext& ctx) {
  const std::string& stacked = dmlc::get<PforCondParam>(ctx.attrs().parsed).stacked;
  std::vector<NodeEntry> inputs{ctx.MergeLeading(ctx.Stacked(0), ctx.in_shape(0))};
  for (size_t j = 0; j < stacked.size(); ++j) {
    if (stacked[j] == '0' && ctx.stacked(1 + j)) return {};
    inputs.push_back(stacked[j] == '1' ? ctx.MergeLeading(ctx.Stacked(1 + j), ctx.in_shape(1 + j))
                                       : ctx.input(1 + j).entry);
  }
  NodeEntry merged = ctx.CopyNode(std::move(inputs), ctx.attrs().dict);
  std::vector<PforValue> outs;
  for (uint32_t j = 0; j < ctx.num_outputs(); ++j) {
    outs.push_back(PforValue{ctx.SplitLeading(NodeEntry{merged.node, j}, ctx.out_shape(j)), true});
  }
  return outs;
}

// ---------------------------------------------------------------- while_loop

/*! \brief `mask` [n] broadcast against a stacked value of per-iteration rank `rank`: [n, 1, ...]. */
NodeEntry MaskFor(PforContext& ctx, const NodeEntry& mask, int rank) {
  std::vector<int64_t> dims(rank + 1, 1);
  dims[0] = ctx.n();
  return rank == 0 ? mask : ctx.Make("reshape", {mask}, {{"shape", ShapeText(dims)}});
}

/*!
 * \brief while_loop: a loop over every variable stacked while any iteration's condition holds,
 * finished iterations keeping their variables. Declines variables whose shape the loop changes.
 */
std::vector<PforValue> WhileVectorize(PforContext& ctx) {
  if (ctx.n() == 0) return {};
  for (size_t j = 0; j < ctx.num_inputs(); ++j) {
    if (ctx.in_shape(j) != ctx.out_shape(j)) return {};  // shapes changing per iteration cannot be stacked
  }
  const NodeAttrs& attrs = ctx.attrs();
  const std::string name = StrCat(ctx.prefix(), "/", attrs.name);
  const std::vector<bool> all(ctx.num_inputs(), true);
  const Subgraph& cond = *attrs.subgraphs[0];
  const Subgraph& body = *attrs.subgraphs[1];
  auto conditions = [&](const std::vector<NodeEntry>& vars, const std::string& where) {
    NodeEntry c = RowsPfor(cond, vars, all, ctx.n(), where + "/conditions")[0];
    return MakeNode("cast", where + "/mask", {c}, {{"dtype", "bool"}});
  };
  auto any_body = MakeBody(name + "/cond", ctx.num_inputs(), [&](const std::vector<NodeEntry>& vars) {
    NodeEntry mask =
        MakeNode("cast", name + "/cond/mask_int", {conditions(vars, name + "/cond")}, {{"dtype", "int32"}});
    return std::vector<NodeEntry>{MakeNode("max", name + "/cond/any", {mask})};
  });
  auto masked_body = MakeBody(name + "/body", ctx.num_inputs(), [&](const std::vector<NodeEntry>& vars) {
    NodeEntry mask = conditions(vars, name + "/body");
    std::vector<NodeEntry> next = RowsPfor(body, vars, all, ctx.n(), name + "/body/step");
    for (size_t j = 0; j < next.size(); ++j) {
      next[j] = MakeNode("where", StrCat(name, "/body/keep_", j),
                         {MaskFor(ctx, mask, ctx.in_shape(j).ndim()), next[j], vars[j]});
    }
    return next;
  });
  std::vector<NodeEntry> vars;
  for (size_t j = 0; j < ctx.num_inputs(); ++j) vars.push_back(ctx.Stacked(j));
  std::map<std::string, std::string> dict = attrs.dict;
  dict.erase("shape_invariants");  // the variables keep their shapes (checked above)
  return AllStacked(
      Node::Create(Op::Get("while_loop"), name + "/while", dict, std::move(vars), {any_body, masked_body}));
}

}  // namespace

IR_REGISTER_OP(cond).set_attr<FVectorize>("FVectorize", CondVectorize);
IR_REGISTER_OP(while_loop).set_attr<FVectorize>("FVectorize", WhileVectorize);

IR_REGISTER_OP(_pfor_cond)
    .describe(
        "A cond with a predicate per iteration (made by the Vectorize pass): pred [n], then the branch "
        "arguments (stacked ones [n, ...]); body k (then, else) runs once on the rows of the iterations "
        "taking it, plus their ids, and its results are stitched back into rows [n, ...].")
    .set_num_inputs([](const NodeAttrs& attrs) {
      return attrs.subgraphs.empty() ? 0u : static_cast<uint32_t>(attrs.subgraphs[0]->params.size());
    })
    .set_num_outputs([](const NodeAttrs& attrs) {
      return attrs.subgraphs.empty() ? 0u : static_cast<uint32_t>(attrs.subgraphs[0]->graph.outputs.size());
    })
    .set_param<PforCondParam>()
    .set_attr_parser(ParsePforCond)
    .set_attr<FInferShape>("FInferShape", PforCondShape)
    .set_attr<FInferType>("FInferType", PforCondType)
    .set_attr<FControlFlow>("FControlFlow", PforCondCompute)
    .set_attr<FVectorize>("FVectorize", PforCondVectorize)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
