/*!
 * \file nn_vectorize.cc
 * \brief FVectorize converters (see ir/vectorize.h) of matmul, bias_add(_grad), softmax and
 * log_softmax, the softmax cross-entropy losses, dropout, batch norm, the random ops and the
 * state ops. (The reductions' converters are in reduce.cc.)
 *
 * GEMMs stay large: a stacked a times a loop-invariant matrix b is one matmul with the
 * iterations merged into a's rows; other mixes are batched matmuls with n as a batch axis.
 * Batch norm keeps its statistics per iteration by merging the iterations into the channel
 * axis. Stateful ops draw once for all iterations: element-wise independent draws over [n] +
 * shape are per-iteration independent draws.
 */
#include <string>
#include <vector>

#include "ir/vectorize.h"
#include "ops/matrix.h"
#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace {

NodeEntry Reshape(PforContext& ctx, const NodeEntry& e, const std::vector<int64_t>& dims) {
  return ctx.Make("reshape", {e}, {{"shape", StrCat(IntList(dims))}});
}

/*! \brief The node's attribute `key`, or `fallback` when unset. */
std::string AttrOr(const PforContext& ctx, const std::string& key, const std::string& fallback) {
  auto it = ctx.attrs().dict.find(key);
  return it == ctx.attrs().dict.end() ? fallback : it->second;
}

/*! \brief [n] + `shape`. */
std::vector<int64_t> WithN(const PforContext& ctx, const Shape& shape) {
  std::vector<int64_t> dims{ctx.n()};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return dims;
}

/*! \brief Stacked input i with 1s inserted after n up to per-iteration rank `rank`, so that n leads the batch axes. */
NodeEntry PadAfterN(PforContext& ctx, size_t i, int rank) {
  const Shape& s = ctx.in_shape(i);
  if (s.ndim() == rank) return ctx.input(i).entry;
  std::vector<int64_t> dims{ctx.n()};
  dims.resize(1 + rank - s.ndim(), 1);
  dims.insert(dims.end(), s.dims().begin(), s.dims().end());
  return Reshape(ctx, ctx.input(i).entry, dims);
}

// ---------------------------------------------------------------- matmul, bias

/*!
 * \brief A stacked a (not transposed) times an unstacked matrix b: one GEMM over all the rows of
 * every iteration (per-example forward and input gradients). Otherwise a batched matmul whose
 * leading batch axis is n (stacked operands padded to the same rank; unstacked ones broadcast).
 */
std::vector<PforValue> MatmulVectorize(PforContext& ctx) {
  const MatmulParam& p = dmlc::get<MatmulParam>(ctx.attrs().parsed);
  const Shape &a = ctx.in_shape(0), &b = ctx.in_shape(1);
  if (ctx.stacked(0) && !ctx.stacked(1) && !p.transpose_a && b.ndim() == 2) {
    NodeEntry rows = Reshape(ctx, ctx.input(0).entry, {ctx.n() * a.ProdDims(0, a.ndim() - 1), a[a.ndim() - 1]});
    NodeEntry product = ctx.CopyNode({rows, ctx.input(1).entry}, ctx.attrs().dict);
    return {PforValue{ctx.SplitLeading(product, ctx.out_shape(0)), true}};
  }
  if (a.ndim() == 2 && b.ndim() == 2 && a[p.transpose_a ? 0 : 1] == 1) {
    // Contracting an extent of 1 (the weight gradient of one example): an outer product, which
    // a broadcast multiply writes at memory speed instead of n tiny GEMMs.
    const int64_t m = a[p.transpose_a ? 1 : 0], q = b[p.transpose_b ? 0 : 1];
    auto shaped = [&](size_t i, std::vector<int64_t> dims) {
      if (ctx.stacked(i)) dims.insert(dims.begin(), ctx.n());
      return Reshape(ctx, ctx.input(i).entry, dims);
    };
    return {PforValue{ctx.Make("multiply", {shaped(0, {m, 1}), shaped(1, {1, q})}), true}};
  }
  const int rank = std::max(a.ndim(), b.ndim());
  NodeEntry x = ctx.stacked(0) ? PadAfterN(ctx, 0, rank) : ctx.input(0).entry;
  NodeEntry y = ctx.stacked(1) ? PadAfterN(ctx, 1, rank) : ctx.input(1).entry;
  return {PforValue{ctx.CopyNode({x, y}, ctx.attrs().dict), true}};
}

/*!
 * \brief A stacked bias is added with NumPy broadcasting, shaped [n, 1.., C, 1..] along x's
 * channel axis; an unstacked one stays a bias_add (NCHW: with n merged into x's batch axis).
 */
std::vector<PforValue> BiasAddVectorize(PforContext& ctx) {
  const Shape& x = ctx.in_shape(0);
  const int channel = ChannelAxis(ctx.attrs(), x.ndim());
  if (ctx.stacked(1)) {
    std::vector<int64_t> dims(1 + x.ndim(), 1);
    dims[0] = ctx.n();
    dims[1 + channel] = x[channel];
    return {PforValue{ctx.Make("add", {ctx.input(0).entry, Reshape(ctx, ctx.input(1).entry, dims)}), true}};
  }
  if (ChannelAxis(ctx.attrs(), x.ndim() + 1) == channel + 1) {  // NHWC: the channels stay last
    return {PforValue{ctx.CopyNode({ctx.input(0).entry, ctx.input(1).entry}, ctx.attrs().dict), true}};
  }
  NodeEntry merged = ctx.MergeLeading(ctx.input(0).entry, x);
  return {PforValue{ctx.SplitLeading(ctx.CopyNode({merged, ctx.input(1).entry}, ctx.attrs().dict), x), true}};
}

/*! \brief Per-iteration sums over every axis but the channel axis. */
std::vector<PforValue> BiasAddGradVectorize(PforContext& ctx) {
  std::vector<int64_t> axes;
  for (int d : BiasGradAxes(ctx.attrs(), ctx.in_shape(0).ndim())) axes.push_back(d + 1);
  if (axes.empty()) return {ctx.input(0)};
  return {PforValue{ctx.Make("sum", {ctx.input(0).entry}, {{"axis", StrCat(IntList(axes))}}), true}};
}

// ---------------------------------------------------------------- softmax, losses

std::vector<PforValue> SoftmaxVectorize(PforContext& ctx) {
  int axis = NormalizeAxis(ctx.attrs(), std::stoi(AttrOr(ctx, "axis", "-1")), ctx.in_shape(0).ndim());
  return {PforValue{ctx.CopyNode({ctx.input(0).entry}, ctx.DictWith("axis", std::to_string(axis + 1))), true}};
}

/*! \brief Rows are independent: the iterations' rows [n, N, ..] become one batch of n * N rows. */
std::vector<PforValue> CrossEntropyVectorize(PforContext& ctx) {
  NodeEntry logits = ctx.MergeLeading(ctx.Stacked(0), ctx.in_shape(0));
  NodeEntry labels = ctx.MergeLeading(ctx.Stacked(1), ctx.in_shape(1));
  NodeEntry loss = ctx.CopyNode({logits, labels}, ctx.attrs().dict);
  return {PforValue{ctx.SplitLeading(loss, ctx.out_shape(0)), true},
          PforValue{ctx.SplitLeading(NodeEntry{loss.node, 1}, ctx.out_shape(1)), true}};
}

// ---------------------------------------------------------------- batch norm

/*!
 * \brief Batch norm of every iteration at once: the iterations merged into the channel axis
 * (activation [n] + S -> S with S[c] * n channels, per-channel vectors [n, C] -> [n * C]), so
 * each iteration's channels keep their own statistics over that iteration's batch.
 */
class ChannelMerge {
 public:
  ChannelMerge(PforContext& ctx, const Shape& act)
      : ctx_(ctx),
        act_(act),
        c_(nn::ParseLayout(ctx.attrs(), AttrOr(ctx, "data_format", "NHWC")) == nn::Layout::kNHWC ? act.ndim() - 1 : 1) {
  }

  NodeEntry Activation(size_t i) {
    std::vector<int64_t> perm;
    for (int d = 1; d <= c_; ++d) perm.push_back(d);
    perm.push_back(0);
    for (int d = c_ + 1; d <= act_.ndim(); ++d) perm.push_back(d);
    NodeEntry moved = ctx_.Make("transpose", {ctx_.Stacked(i)}, {{"axes", StrCat(IntList(perm))}});
    std::vector<int64_t> dims = act_.dims();
    dims[c_] *= ctx_.n();
    return Reshape(ctx_, moved, dims);
  }

  NodeEntry SplitActivation(const NodeEntry& e) {
    std::vector<int64_t> dims = act_.dims();
    dims.insert(dims.begin() + c_, ctx_.n());
    std::vector<int64_t> perm{c_};
    for (int d = 0; d <= act_.ndim(); ++d) {
      if (d != c_) perm.push_back(d);
    }
    return ctx_.Make("transpose", {Reshape(ctx_, e, dims)}, {{"axes", StrCat(IntList(perm))}});
  }

  /*! \brief Per-channel input i as [n * C]; an unstacked empty one (mean or variance in training) stays empty. */
  NodeEntry Channels(size_t i) {
    int64_t channels = ctx_.in_shape(i)[0];
    if (channels == 0) return ctx_.input(i).entry;
    return Reshape(ctx_, ctx_.Stacked(i), {ctx_.n() * channels});
  }

  NodeEntry SplitChannels(const NodeEntry& e) { return Reshape(ctx_, e, {ctx_.n(), act_[c_]}); }

 private:
  PforContext& ctx_;
  Shape act_;
  int c_;
};

/*! \brief batch_norm (kActivations = 1: x) and batch_norm_grad (2: dy, x); the other inputs are per channel. */
template <size_t kActivations>
std::vector<PforValue> BatchNormVectorize(PforContext& ctx) {
  for (size_t i = kActivations; i < ctx.num_inputs(); ++i) {
    // Stacked empty statistics: reshape reads a 0 as "keep this dimension", so [n, 0] cannot become [0].
    if (ctx.stacked(i) && ctx.in_shape(i)[0] == 0) return {};
  }
  ChannelMerge merge(ctx, ctx.in_shape(0));
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    inputs.push_back(i < kActivations ? merge.Activation(i) : merge.Channels(i));
  }
  NodeEntry y = ctx.CopyNode(std::move(inputs), ctx.attrs().dict);
  std::vector<PforValue> outs{PforValue{merge.SplitActivation(y), true}};
  for (uint32_t j = 1; j < ctx.num_outputs(); ++j) {
    outs.push_back(PforValue{merge.SplitChannels(NodeEntry{y.node, j}), true});
  }
  return outs;
}

// ---------------------------------------------------------------- stateful ops

/*! \brief One dropout over [n] + shape: every element, so every iteration, draws its own mask. */
std::vector<PforValue> DropoutVectorize(PforContext& ctx) {
  NodeEntry y = ctx.CopyNode({ctx.Stacked(0)}, ctx.attrs().dict);
  return {PforValue{y, true}, PforValue{NodeEntry{y.node, 1}, true}};
}

/*! \brief One draw of shape [n] + shape: independent elements, so independent iterations. */
std::vector<PforValue> RandomVectorize(PforContext& ctx) {
  return {PforValue{ctx.CopyNode({}, ctx.DictWith("shape", StrCat(IntList(WithN(ctx, ctx.out_shape(0)))))), true}};
}

/*!
 * \brief A write of per-iteration values into one variable has no batched form (the last
 * iteration's write wins in the loop): the assign family declines and runs as a counted loop.
 * (Without a converter, their elementwise pattern would get the generic converter, which would
 * write into a broadcast copy of the variable.)
 */
std::vector<PforValue> DeclineStateUpdate(PforContext&) { return {}; }

/*! \brief group's token does not depend on the values it waits for: one token after all of them. */
std::vector<PforValue> GroupVectorize(PforContext& ctx) {
  std::vector<NodeEntry> inputs;
  for (const PforValue& v : ctx.inputs()) inputs.push_back(v.entry);
  return {PforValue{ctx.CopyNode(std::move(inputs), ctx.attrs().dict), false}};
}

}  // namespace

IR_REGISTER_OP(matmul).set_attr<FVectorize>("FVectorize", MatmulVectorize);
IR_REGISTER_OP(bias_add).set_attr<FVectorize>("FVectorize", BiasAddVectorize);
IR_REGISTER_OP(bias_add_grad).set_attr<FVectorize>("FVectorize", BiasAddGradVectorize);
IR_REGISTER_OP(softmax).set_attr<FVectorize>("FVectorize", SoftmaxVectorize);
IR_REGISTER_OP(log_softmax).set_attr<FVectorize>("FVectorize", SoftmaxVectorize);
IR_REGISTER_OP(softmax_cross_entropy_with_logits).set_attr<FVectorize>("FVectorize", CrossEntropyVectorize);
IR_REGISTER_OP(sparse_softmax_cross_entropy_with_logits).set_attr<FVectorize>("FVectorize", CrossEntropyVectorize);
IR_REGISTER_OP(batch_norm).set_attr<FVectorize>("FVectorize", BatchNormVectorize<1>);
IR_REGISTER_OP(batch_norm_grad).set_attr<FVectorize>("FVectorize", BatchNormVectorize<2>);
IR_REGISTER_OP(dropout).set_attr<FVectorize>("FVectorize", DropoutVectorize);
IR_REGISTER_OP(random_uniform).set_attr<FVectorize>("FVectorize", RandomVectorize);
IR_REGISTER_OP(random_normal).set_attr<FVectorize>("FVectorize", RandomVectorize);
IR_REGISTER_OP(truncated_normal).set_attr<FVectorize>("FVectorize", RandomVectorize);
IR_REGISTER_OP(assign).set_attr<FVectorize>("FVectorize", DeclineStateUpdate);
IR_REGISTER_OP(assign_add).set_attr<FVectorize>("FVectorize", DeclineStateUpdate);
IR_REGISTER_OP(assign_sub).set_attr<FVectorize>("FVectorize", DeclineStateUpdate);
IR_REGISTER_OP(group).set_attr<FVectorize>("FVectorize", GroupVectorize);

}  // namespace op
}  // namespace ir
