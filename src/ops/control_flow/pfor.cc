/*!
 * \file pfor.cc
 * \brief pfor: the parallel-for loop `outputs[i] = body(i, captures)` for i in [0, n).
 *
 * The Vectorize pass (src/passes/vectorize.cc) replaces pfor nodes by batched graphs; what it
 * cannot vectorize stays a pfor node with vectorize=false, run by this op's kernel as a loop
 * (one body run per iteration, each with its own random key). The loop is also the oracle the
 * tests compare vectorized graphs against. The gradient of a pfor is a pfor of the body's
 * gradient, summed over the iterations, so jacobians of jacobians vectorize too. When that
 * gradient reads values of nodes with effects (a host callback's result), it is a _pfor_grad
 * instead: the pfor (then not vectorized) saves those values iteration by iteration for it.
 */
#include <string>
#include <vector>

#include "ir/pass.h"
#include "ops/control_flow/control_flow_gradient.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

struct PforParam : public dmlc::Parameter<PforParam> {
  int64_t n;
  int n_from;
  bool vectorize;
  std::string fallback_op;
  int parallel_iterations;
  DMLC_DECLARE_PARAMETER(PforParam) {
    DMLC_DECLARE_FIELD(n).set_default(-1).describe("Number of iterations; -1: the leading dim of input n_from.");
    DMLC_DECLARE_FIELD(n_from).set_default(-1).describe("With n = -1, the input whose leading dim is n.");
    DMLC_DECLARE_FIELD(vectorize).set_default(true).describe(
        "Whether the Vectorize pass converts the loop (false: it runs as a loop).");
    DMLC_DECLARE_FIELD(fallback_op)
        .set_default("")
        .describe("Set by the Vectorize pass on the loop it left for a node it could not convert: that node's op.");
    DMLC_DECLARE_FIELD(parallel_iterations)
        .set_default(0)
        .describe("Accepted for TensorFlow (iterations vectorized at once); 0 or >= n: all of them.");
  }
};
DMLC_REGISTER_PARAMETER(PforParam);

const Subgraph& Body(const NodeAttrs& attrs) { return *attrs.subgraphs.at(0); }

void ParsePfor(NodeAttrs* attrs) {
  ParamParser<PforParam>(attrs);
  IR_CHECK(attrs->subgraphs.size() == 1) << NodeDesc(*attrs) << " needs 1 body, got " << attrs->subgraphs.size();
  const PforParam& p = dmlc::get<PforParam>(attrs->parsed);
  const Subgraph& body = Body(*attrs);
  IR_CHECK(!body.params.empty()) << NodeDesc(*attrs) << ": the body's first param must be the iteration index";
  IR_CHECK(p.n >= 0 || (p.n_from >= 0 && static_cast<size_t>(p.n_from) + 1 < body.params.size()))
      << NodeDesc(*attrs) << ": n = " << p.n << " needs n_from, the input whose leading dim is n (got " << p.n_from
      << " of " << body.params.size() - 1 << " inputs)";
}

/*! \brief n, from the attribute or input n_from's leading dim; -1 while that is unknown. */
int64_t IterationCount(const NodeAttrs& attrs, const std::vector<Shape>& in) {
  const PforParam& p = dmlc::get<PforParam>(attrs.parsed);
  if (p.n >= 0) return p.n;
  const Shape& from = in.at(p.n_from);
  if (!from.rank_known()) return -1;
  IR_CHECK(from.ndim() >= 1) << NodeDesc(attrs) << ": input " << p.n_from
                             << " gives the iteration count by its leading dim, but it is a scalar";
  return from[0];
}

std::vector<Shape> BodyParamShapes(const std::vector<Shape>& in) {
  std::vector<Shape> args{Shape::Scalar()};
  args.insert(args.end(), in.begin(), in.end());
  return args;
}

bool PforShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  int64_t n = IterationCount(attrs, *in);
  std::vector<Shape> per =
      InferSubgraphShapes(Body(attrs), BodyParamShapes(*in), StrCat(NodeDesc(attrs), ": in the body"));
  for (size_t j = 0; j < per.size(); ++j) {
    std::vector<int64_t> dims{n < 0 ? kUnknownDim : n};
    if (!per[j].rank_known()) continue;
    dims.insert(dims.end(), per[j].dims().begin(), per[j].dims().end());
    AssignShape(attrs, StrCat("output ", j), &(*out)[j], Shape(dims));
  }
  for (const Shape& s : *out) {
    if (!s.is_known()) return false;
  }
  return true;
}

bool PforType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  std::vector<DType> args{DType::kInt32};
  args.insert(args.end(), in->begin(), in->end());
  std::vector<DType> per = InferSubgraphTypes(Body(attrs), args, StrCat(NodeDesc(attrs), ": in the body"));
  bool known = true;
  for (size_t j = 0; j < per.size(); ++j) {
    if (per[j] != DType::kUnknown) AssignType(attrs, StrCat("output ", j), &(*out)[j], per[j]);
    known = known && (*out)[j] != DType::kUnknown;
  }
  return known;
}

/*! \brief How a loop's iterations run: the body, and the values they save or read. */
struct Iterations {
  /*! \brief The body that runs instead of the node's own (a _pfor_grad's saving body), or null. */
  const Subgraph* body = nullptr;
  /*! \brief When set, each iteration's outputs after `results` are saved here. */
  SavedRuns* saving = nullptr;
  /*! \brief When set, each iteration reads its saved values (after the other args) from here. */
  const SavedRuns* saved = nullptr;
  /*! \brief With `saving`: the gradient nodes reading the records of saved values (SavedValueReaders). */
  std::vector<const NodeAttrs*> readers;
};

/*!
 * \brief Iterations [0, n) of the body on (i, in...), each with key i, their results copied into row
 * i of each of `results` (allocated by iteration 0).
 */
void RunIterations(const OpContext& ctx, const NodeAttrs& attrs, int64_t n, const std::vector<NDArray>& in,
                   const BodyRunner& run_body, const Iterations& how, std::vector<NDArray>* results) {
  std::vector<NDArray> args{NDArray()};
  args.insert(args.end(), in.begin(), in.end());
  for (int64_t i = 0; i < n; ++i) {
    NDArray index(Shape::Scalar(), DType::kInt32, ctx.device);
    index.CopyFrom(NDArray::Scalar<int32_t>(static_cast<int32_t>(i)));
    BodyCall call;
    call.body = how.body;
    call.args = args;
    call.args[0] = index;
    call.key = static_cast<uint64_t>(i);
    call.output_gradients = how.readers;
    if (how.saved != nullptr) {
      const BodyResult& saved = how.saved->saved.at(static_cast<size_t>(i));
      call.records.assign(call.args.size(), nullptr);
      call.args.insert(call.args.end(), saved.outputs.begin(), saved.outputs.end());
      call.records.insert(call.records.end(), saved.records.begin(), saved.records.end());
    }
    BodyResult result = run_body.Run(call);
    if (how.saving != nullptr) how.saving->saved.push_back(SplitSaved(&result, results->size()));
    const std::vector<NDArray>& out = result.outputs;
    for (size_t j = 0; j < out.size(); ++j) {
      NDArray& stacked = (*results)[j];
      if (i == 0) {
        std::vector<int64_t> dims{n};
        dims.insert(dims.end(), out[j].shape().dims().begin(), out[j].shape().dims().end());
        stacked = NDArray(Shape(dims), out[j].dtype(), ctx.device);
      }
      IR_CHECK(Shape(std::vector<int64_t>(stacked.shape().dims().begin() + 1, stacked.shape().dims().end())) ==
               out[j].shape())
          << NodeDesc(attrs) << ": iteration " << i << " gives output " << j << " of shape " << out[j].shape()
          << ", iteration 0 gave " << stacked.shape() << " without its leading n";
      stacked.Slice(i, i + 1).Reshape(out[j].shape()).CopyFrom(out[j]);
    }
  }
}

std::vector<Shape> ShapesOf(const std::vector<NDArray>& arrays) {
  std::vector<Shape> shapes;
  for (const NDArray& a : arrays) shapes.push_back(a.shape());
  return shapes;
}

/*!
 * \brief The loop: one body run per iteration. With a _pfor_grad in the run, each iteration runs
 * that node's saving body instead and the values it saves are recorded for it.
 */
std::vector<NDArray> PforCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                 const BodyRunner& run_body) {
  std::vector<Shape> in_shapes = ShapesOf(in);
  int64_t n = IterationCount(attrs, in_shapes);
  const Subgraph& body = Body(attrs);
  std::vector<NDArray> results(body.graph.outputs.size());
  Iterations how;
  if (ctx.gradient != nullptr) {
    IR_CHECK(ctx.gradient->op->name == "_pfor_grad" && ctx.gradient->subgraphs.size() == 2)
        << NodeDesc(attrs) << ": " << NodeDesc(*ctx.gradient) << " reads its record but is not its _pfor_grad";
    auto record = std::make_shared<SavedRuns>();
    how.body = ctx.gradient->subgraphs[1].get();
    how.saving = record.get();
    how.readers = SavedValueReaders(*ctx.gradient->subgraphs[0], *how.body, results.size());
    *ctx.record = record;
  }
  if (n == 0) {
    std::vector<Shape> per = InferSubgraphShapes(body, BodyParamShapes(in_shapes), NodeDesc(attrs));
    std::vector<DType> types{DType::kInt32};
    for (const NDArray& a : in) types.push_back(a.dtype());
    std::vector<DType> dtypes = InferSubgraphTypes(body, types, NodeDesc(attrs));
    for (size_t j = 0; j < results.size(); ++j) {
      std::vector<int64_t> dims{0};
      dims.insert(dims.end(), per[j].dims().begin(), per[j].dims().end());
      results[j] = NDArray(Shape(dims), dtypes[j], ctx.device);
    }
    return results;
  }
  RunIterations(ctx, attrs, n, in, run_body, how, &results);
  return results;
}

/*! \brief How many captures the forward pfor of a _pfor_grad has: its gradient has one output per capture. */
uint32_t NumCaptures(const NodeAttrs& attrs) {
  return attrs.subgraphs.size() == 2 ? static_cast<uint32_t>(attrs.subgraphs[0]->graph.outputs.size()) : 0;
}

/*! \brief Each iteration's gradient of the captures, on the values the pfor saved in that iteration. */
std::vector<NDArray> PforGradCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                     const BodyRunner& run_body) {
  SavedRuns* runs = ForwardRuns(ctx, attrs);
  std::vector<NDArray> given(in.begin(), in.end() - 1);
  int64_t n = IterationCount(attrs, ShapesOf(given));
  IR_CHECK(runs != nullptr && runs->saved.size() == static_cast<size_t>(n))
      << NodeDesc(attrs) << ": what its pfor saved did not reach it (is the pfor's output fed, or the pfor "
      << "vectorized inside another?), and the body's nodes with effects must not run again";
  std::vector<NDArray> results(NumCaptures(attrs));
  for (size_t j = 0; j < results.size() && n == 0; ++j) {
    std::vector<int64_t> dims{0};
    dims.insert(dims.end(), in[j].shape().dims().begin(), in[j].shape().dims().end());
    results[j] = NDArray(Shape(dims), in[j].dtype(), ctx.device);
  }
  Iterations how;
  how.saved = runs;
  RunIterations(ctx, attrs, n, given, run_body, how, &results);
  return results;
}

/*! \brief Output j is [n] + the shape of capture j (input j): one gradient of it per iteration. */
bool PforGradShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  int64_t n = IterationCount(attrs, *in);
  for (size_t j = 0; j < out->size(); ++j) {
    if (!(*in)[j].rank_known()) continue;
    std::vector<int64_t> dims{n < 0 ? kUnknownDim : n};
    dims.insert(dims.end(), (*in)[j].dims().begin(), (*in)[j].dims().end());
    AssignShape(attrs, StrCat("output ", j), &(*out)[j], Shape(dims));
  }
  return AllKnown(*in, *out);
}

bool PforGradType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  for (size_t j = 0; j < out->size(); ++j) {
    if ((*in)[j] != DType::kUnknown) AssignType(attrs, StrCat("output ", j), &(*out)[j], (*in)[j]);
  }
  return AllKnown(*in, *out);
}

void ParsePforGrad(NodeAttrs* attrs) {
  ParamParser<PforParam>(attrs);
  IR_CHECK(attrs->subgraphs.size() == 2) << NodeDesc(*attrs) << " needs 2 bodies (the gradient, the saving body), got "
                                         << attrs->subgraphs.size();
}

/*!
 * \brief d/d(captures) of a pfor: a pfor (a _pfor_grad when it reads saved values) whose body takes
 * the stacked head gradients too and returns each iteration's gradient of the captures, summed
 * over the iterations.
 */
std::vector<NodeEntry> PforGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds) {
  const NodeAttrs& attrs = node->attrs;
  const Subgraph& body = Body(attrs);
  NodeEntry index{body.params[0], 0};
  std::vector<NodePtr> head_params;
  std::vector<NodeEntry> heads;
  for (size_t j = 0; j < body.graph.outputs.size(); ++j) {
    head_params.push_back(Node::CreateVariable(StrCat(attrs.name, "_grad/head_", j)));
    heads.push_back(
        MakeNode("gather", StrCat(attrs.name, "_grad/head_", j, "_row"), {NodeEntry{head_params.back(), 0}, index}));
  }
  BodyGradient grad = DifferentiateBody(body, attrs.name + "_grad", 1, std::move(head_params), heads);
  std::vector<NodeEntry> inputs = node->inputs;
  inputs.insert(inputs.end(), ograds.begin(), ograds.end());
  std::map<std::string, std::string> dict = attrs.dict;
  dict.erase("fallback_op");
  NodePtr loop;
  if (grad.forward == nullptr) {
    loop = Node::Create(attrs.op, attrs.name + "_grad", dict, std::move(inputs), {grad.gradient});
  } else {
    inputs.push_back(Out(node, 0));  // what the pfor saves for this node
    loop = Node::Create(Op::Get("_pfor_grad"), attrs.name + "_grad", dict, std::move(inputs),
                        {grad.gradient, grad.forward});
  }
  std::vector<NodeEntry> result;
  for (uint32_t i = 0; i < node->inputs.size(); ++i) {
    result.push_back(MakeNode("sum", StrCat(attrs.name, "_grad/sum_", i), {Out(loop, i)}, {{"axis", "(0)"}}));
  }
  return result;
}

}  // namespace

IR_REGISTER_OP(pfor)
    .describe(
        "The parallel-for loop outputs[i] = body(i, inputs) for i in [0, n): body 0 takes the index (int32 "
        "scalar) then the inputs; outputs are stacked over the iterations. The Vectorize pass turns it into "
        "batched ops.")
    .set_num_inputs([](const NodeAttrs& attrs) {
      return attrs.subgraphs.empty() || Body(attrs).params.empty()
                 ? 0u
                 : static_cast<uint32_t>(Body(attrs).params.size() - 1);
    })
    .set_num_outputs([](const NodeAttrs& attrs) {
      return attrs.subgraphs.empty() ? 0u : static_cast<uint32_t>(Body(attrs).graph.outputs.size());
    })
    .set_param<PforParam>()
    .set_attr_parser(ParsePfor)
    .set_attr<FInferShape>("FInferShape", PforShape)
    .set_attr<FInferType>("FInferType", PforType)
    .set_attr<FControlFlow>("FControlFlow", PforCompute)
    .set_attr<FGradient>("FGradient", PforGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(_pfor_grad)
    .describe(
        "Gradient of a pfor whose body's gradient reads values of nodes with effects: inputs (captures, stacked "
        "output gradients, the pfor's output 0); iteration i runs body 0 (index, inputs, the values the pfor "
        "saved in iteration i by running body 1); outputs each iteration's gradients of the captures, stacked.")
    .set_num_inputs(kVariadic)
    .set_num_outputs(NumCaptures)
    .set_param<PforParam>()
    .set_attr_parser(ParsePforGrad)
    .set_attr<FInferShape>("FInferShape", PforGradShape)
    .set_attr<FInferType>("FInferType", PforGradType)
    .set_attr<FControlFlow>("FControlFlow", PforGradCompute)
    .set_attr<FForwardInput>("FForwardInput",
                             [](const NodeAttrs&, uint32_t num_inputs) { return static_cast<int>(num_inputs) - 1; })
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
