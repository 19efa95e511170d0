/*!
 * \file collective.cc
 * \brief Collectives across the processes of a data-parallel job (ir/collective.h):
 * allreduce, allgather and broadcast, and the pair _allreduce_start / _allreduce_wait the
 * ScheduleCollectives pass splits allreduce into, so buckets of gradients are reduced on the
 * engine's thread while the backward pass goes on.
 *
 * Each collective is named (attribute tensor_name, else the node's name): every rank must
 * submit the same names in the same order, and the engine reports those that differ. The
 * nodes are stateful (never folded, merged or vectorized) and opaque (fusion barriers); their
 * kernels run on the host, on every target.
 */
#include <dmlc/parameter.h>

#include "ir/collective.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

collective::ReduceOp ParseReduceOp(const NodeAttrs& attrs, const std::string& text) {
  if (text == "sum") return collective::ReduceOp::kSum;
  if (text == "average") return collective::ReduceOp::kAverage;
  throw Error(StrCat(NodeDesc(attrs), ": reduce_op must be \"sum\" or \"average\", got \"", text, "\""));
}

struct AllreduceParam : public dmlc::Parameter<AllreduceParam> {
  std::string reduce_op;
  std::string tensor_name;
  DMLC_DECLARE_PARAMETER(AllreduceParam) {
    DMLC_DECLARE_FIELD(reduce_op).set_default("sum").describe("\"sum\", or \"average\" (the sum over the size).");
    DMLC_DECLARE_FIELD(tensor_name)
        .set_default("")
        .describe("The name every rank submits the tensor under (\"\": the node's name).");
  }
};
DMLC_REGISTER_PARAMETER(AllreduceParam);

struct BroadcastParam : public dmlc::Parameter<BroadcastParam> {
  int root_rank;
  std::string tensor_name;
  DMLC_DECLARE_PARAMETER(BroadcastParam) {
    DMLC_DECLARE_FIELD(root_rank).set_default(0).set_lower_bound(0).describe("The rank whose value every rank gets.");
    DMLC_DECLARE_FIELD(tensor_name).set_default("").describe("The name every rank submits the tensor under.");
  }
};
DMLC_REGISTER_PARAMETER(BroadcastParam);

struct AllgatherParam : public dmlc::Parameter<AllgatherParam> {
  std::string tensor_name;
  DMLC_DECLARE_PARAMETER(AllgatherParam) {
    DMLC_DECLARE_FIELD(tensor_name).set_default("").describe("The name every rank submits the tensor under.");
  }
};
DMLC_REGISTER_PARAMETER(AllgatherParam);

struct AllreduceStartParam : public dmlc::Parameter<AllreduceStartParam> {
  std::string reduce_op;
  std::string tensor_name;
  std::string bucket;
  int num_members;
  int index;
  DMLC_DECLARE_PARAMETER(AllreduceStartParam) {
    DMLC_DECLARE_FIELD(reduce_op).set_default("sum").describe("\"sum\" or \"average\".");
    DMLC_DECLARE_FIELD(tensor_name).set_default("").describe("The tensor's name on every rank.");
    DMLC_DECLARE_FIELD(bucket).set_default("").describe("The bucket's key (\"\": a bucket of its own).");
    DMLC_DECLARE_FIELD(num_members).set_default(1).set_lower_bound(1).describe("Members of the bucket.");
    DMLC_DECLARE_FIELD(index).set_default(0).set_lower_bound(0).describe("This member's index in the bucket.");
  }
};
DMLC_REGISTER_PARAMETER(AllreduceStartParam);

template <typename P>
const P& Param(const NodeAttrs& attrs) {
  return dmlc::get<P>(attrs.parsed);
}

/*! \brief The name the tensor is submitted under: tensor_name, else the node's name. */
std::string TensorName(const NodeAttrs& attrs, const std::string& tensor_name) {
  return tensor_name.empty() ? attrs.name : tensor_name;
}

void ParseAllreduce(NodeAttrs* attrs) {
  ParamParser<AllreduceParam>(attrs);
  ParseReduceOp(*attrs, Param<AllreduceParam>(*attrs).reduce_op);
}

void ParseAllreduceStart(NodeAttrs* attrs) {
  ParamParser<AllreduceStartParam>(attrs);
  const auto& p = Param<AllreduceStartParam>(*attrs);
  ParseReduceOp(*attrs, p.reduce_op);
  IR_CHECK(p.index < p.num_members) << NodeDesc(*attrs) << ": member index " << p.index << " of a bucket of "
                                    << p.num_members;
}

/*! \brief Host copy of `value` (the engine reads host memory). */
NDArray OnHost(const NDArray& value) {
  return value.device().type == DeviceType::kCPU ? value : value.CopyTo(Device::CPU());
}

void AllreduceCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const auto& p = Param<AllreduceParam>(attrs);
  out[0].CopyFrom(
      collective::Allreduce(TensorName(attrs, p.tensor_name), OnHost(in[0]), ParseReduceOp(attrs, p.reduce_op)));
}

void BroadcastCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const auto& p = Param<BroadcastParam>(attrs);
  out[0].CopyFrom(collective::Broadcast(TensorName(attrs, p.tensor_name), OnHost(in[0]), p.root_rank));
}

std::vector<NDArray> AllgatherCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  NDArray gathered = collective::Allgather(TensorName(attrs, Param<AllgatherParam>(attrs).tensor_name), OnHost(in[0]));
  return {ctx.device.type == DeviceType::kCPU ? gathered : gathered.CopyTo(ctx.device)};
}

/*!
 * \brief Allgather's gradient: the output gradients of every rank summed, then this rank's
 * rows (where its input went in the gathered output), found by gathering the first dims.
 */
void AllgatherGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out) {
  const std::string name = TensorName(attrs, Param<AllgatherParam>(attrs).tensor_name);
  const NDArray& x = in[1];
  IR_CHECK(x.shape().ndim() >= 1) << NodeDesc(attrs) << ": allgather needs an input of rank >= 1, got " << x.shape();
  NDArray rows = collective::Allgather(name + "/rows", NDArray::FromVector<int64_t>(Shape{1}, {x.shape()[0]}));
  NDArray summed = collective::Allreduce(name, OnHost(in[0]), collective::ReduceOp::kSum);
  int64_t begin = 0;
  const int64_t* counts = rows.data<int64_t>();
  for (int r = 0; r < collective::Rank(); ++r) begin += counts[r];
  IR_CHECK(summed.shape().ndim() >= 1 && begin + x.shape()[0] <= summed.shape()[0])
      << NodeDesc(attrs) << ": the output gradient " << summed.shape() << " does not hold rows " << begin << ".."
      << begin + x.shape()[0] << " of this rank";
  out[0].CopyFrom(summed.Slice(begin, begin + x.shape()[0]));
}

/*! \brief Broadcast's gradient: the output gradients of every rank summed, on the root; zeros elsewhere. */
void BroadcastGradCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<NDArray>& out) {
  const auto& p = Param<BroadcastParam>(attrs);
  NDArray summed = collective::Allreduce(TensorName(attrs, p.tensor_name), OnHost(in[0]), collective::ReduceOp::kSum);
  if (collective::Rank() == p.root_rank) {
    out[0].CopyFrom(summed);
  } else {
    out[0].CopyFrom(NDArray(out[0].shape(), out[0].dtype()));
  }
}

void AllreduceStartCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                           const std::vector<NDArray>& out) {
  const auto& p = Param<AllreduceStartParam>(attrs);
  collective::AllreduceRequest request;
  request.name = TensorName(attrs, p.tensor_name);
  request.bucket = p.bucket.empty() ? request.name : p.bucket;
  request.num_members = p.num_members;
  request.index = p.index;
  request.op = ParseReduceOp(attrs, p.reduce_op);
  request.value = OnHost(in[0]);
  int64_t ticket = collective::SubmitAllreduce(request);
  out[0].CopyFrom(NDArray::Scalar<int64_t>(ticket));
}

/*!
 * \brief The member's result as the engine holds it (a host array of its own, or at size 1 the
 * submitted value itself): the output without a copy on the executor's side.
 */
std::vector<NDArray> AllreduceWaitCompute(const OpContext& ctx, const NodeAttrs& attrs,
                                          const std::vector<NDArray>& in) {
  NDArray ticket = OnHost(in[0]);
  NDArray result;
  try {
    collective::WaitAllreduce(*ticket.data<int64_t>(), &result);
  } catch (const Error& err) {
    throw Error(StrCat(NodeDesc(attrs), ": ", err.what()));
  }
  IR_CHECK(result.dtype() == in[1].dtype() && result.Size() == in[1].Size())
      << NodeDesc(attrs) << ": the engine returned " << DTypeName(result.dtype()) << result.shape() << " for "
      << DTypeName(in[1].dtype()) << in[1].shape();
  result = result.Reshape(in[1].shape());
  return {result.device() == ctx.device ? result : result.CopyTo(ctx.device)};
}

bool TicketShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], Shape::Scalar());
  return AllKnown(*in, *out);
}

bool TicketType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  CheckDType(attrs, "input", (*in)[0], NumericTypes());
  AssignType(attrs, "output 0", &(*out)[0], DType::kInt64);
  return AllKnown(*in, *out);
}

/*! \brief The wait's output is its input 1 reduced: same shape and dtype (input 0 is the int64 ticket). */
bool WaitShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "input 0", &(*in)[0], Shape::Scalar());
  AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignShape(attrs, "input 1", &(*in)[1], (*out)[0]);
  return AllKnown(*in, *out);
}

bool WaitType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "input 0", &(*in)[0], DType::kInt64);
  AssignType(attrs, "output 0", &(*out)[0], (*in)[1]);
  AssignType(attrs, "input 1", &(*in)[1], (*out)[0]);
  return AllKnown(*in, *out);
}

bool NumericElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) CheckDType(attrs, "input", (*in)[0], NumericTypes());
  return known;
}

/*! \brief Allgather's output: the input's shape with the first dim unknown until the ranks' dims are exchanged. */
bool AllgatherShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape& x = (*in)[0];
  if (x.ndim() == 0) throw Error(StrCat(NodeDesc(attrs), ": allgather needs an input of rank >= 1, got a scalar"));
  if (x.ndim() > 0) {
    std::vector<int64_t> dims = x.dims();
    dims[0] = kUnknownDim;
    AssignShape(attrs, "output 0", &(*out)[0], Shape(dims));
  }
  return false;  // the first dim is only known when the node runs
}

/*! \brief Marks what all collectives share: stateful, may raise, opaque to fusion. */
void CollectiveTraits(Op& op) {
  op.set_attr<TIsStateful>("TIsStateful", true)
      .set_attr<TMayRaise>("TMayRaise", true)
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(allreduce)
    .describe(
        "The input reduced over every rank of the process group (sum, or average: the sum over the size), "
        "the same bits on every rank. Its gradient is the allreduce of the output gradient.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .add_argument("data", "NDArray", "This rank's value.")
    .set_param<AllreduceParam>()
    .set_attr_parser(ParseAllreduce)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", NumericElemwiseType)
    .set_attr<FCompute>("FCompute", AllreduceCompute)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& node, const std::vector<NodeEntry>& ograds) {
                           return std::vector<NodeEntry>{
                               GradNode("allreduce", node, "data", {ograds[0]},
                                        {{"reduce_op", Param<AllreduceParam>(node->attrs).reduce_op}})};
                         })
    .apply(CollectiveTraits);

IR_REGISTER_OP(broadcast)
    .describe(
        "Rank root_rank's value on every rank (shapes and dtypes must agree). The gradient is the sum of "
        "the output gradients on the root, zeros elsewhere.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .add_argument("data", "NDArray", "This rank's value (only the root's is used).")
    .set_param<BroadcastParam>()
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", BroadcastCompute)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& node, const std::vector<NodeEntry>& ograds) {
                           const auto& p = Param<BroadcastParam>(node->attrs);
                           return std::vector<NodeEntry>{
                               GradNode("_broadcast_grad", node, "data", {ograds[0]},
                                        {{"root_rank", std::to_string(p.root_rank)},
                                         {"tensor_name", TensorName(node->attrs, p.tensor_name) + "/grad"}})};
                         })
    .apply(CollectiveTraits);

IR_REGISTER_OP(_broadcast_grad)
    .describe("Broadcast's gradient: the output gradients of every rank summed, on the root; zeros elsewhere.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .add_argument("ograd", "NDArray", "The output gradient.")
    .set_param<BroadcastParam>()
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType", NumericElemwiseType)
    .set_attr<FCompute>("FCompute", BroadcastGradCompute)
    .apply(CollectiveTraits);

IR_REGISTER_OP(allgather)
    .describe(
        "Every rank's value concatenated along axis 0 in rank order; first dims may differ across ranks, "
        "the other dims and the dtype must agree. Gradient: this rank's rows of the summed output gradients.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .add_argument("data", "NDArray", "This rank's rows.")
    .set_param<AllgatherParam>()
    .set_attr<FInferShape>("FInferShape", AllgatherShape)
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FComputeShaped>("FComputeShaped", AllgatherCompute)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& node, const std::vector<NodeEntry>& ograds) {
                           std::string name = TensorName(node->attrs, Param<AllgatherParam>(node->attrs).tensor_name);
                           return std::vector<NodeEntry>{GradNode("_allgather_grad", node, "data",
                                                                  {ograds[0], In(node, 0)},
                                                                  {{"tensor_name", name + "/grad"}})};
                         })
    .apply(CollectiveTraits);

IR_REGISTER_OP(_allgather_grad)
    .describe("Allgather's gradient: this rank's rows of the output gradients summed over the ranks.")
    .set_num_inputs(2)
    .set_num_outputs(1)
    .add_argument("ograd", "NDArray", "The gathered output's gradient.")
    .add_argument("data", "NDArray", "Allgather's input (its shape gives this rank's rows).")
    .set_param<AllgatherParam>()
    .set_attr<FInferShape>("FInferShape",
                           [](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
                             AssignShape(attrs, "output 0", &(*out)[0], (*in)[1]);
                             return AllKnown(*in, *out);
                           })
    .set_attr<FInferType>("FInferType", ElemwiseType)
    .set_attr<FCompute>("FCompute", AllgatherGradCompute)
    .apply(CollectiveTraits);

IR_REGISTER_OP(_allreduce_start)
    .describe(
        "Submits the input as one member of an allreduce bucket to the engine (which reduces the bucket "
        "on its thread once every member is in) and outputs the ticket _allreduce_wait redeems. "
        "Inserted by the ScheduleCollectives pass.")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .add_argument("data", "NDArray", "This rank's value.")
    .set_param<AllreduceStartParam>()
    .set_attr_parser(ParseAllreduceStart)
    .set_attr<FInferShape>("FInferShape", TicketShape)
    .set_attr<FInferType>("FInferType", TicketType)
    .set_attr<FCompute>("FCompute", AllreduceStartCompute)
    .apply(CollectiveTraits);

IR_REGISTER_OP(_allreduce_wait)
    .describe(
        "Waits for the ticket's bucket and outputs this member reduced (shape and dtype of input 1): the "
        "engine's array, not copied. Inserted by the ScheduleCollectives pass.")
    .set_num_inputs(2)
    .set_num_outputs(1)
    .add_argument("ticket", "NDArray", "_allreduce_start's ticket.")
    .add_argument("data", "NDArray", "The submitted value (its shape and dtype).")
    .set_attr<FInferShape>("FInferShape", WaitShape)
    .set_attr<FInferType>("FInferType", WaitType)
    .set_attr<FComputeShaped>("FComputeShaped", AllreduceWaitCompute)
    .apply(CollectiveTraits);

}  // namespace op
}  // namespace ir
