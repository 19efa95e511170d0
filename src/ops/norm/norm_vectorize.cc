/*!
 * \file norm_vectorize.cc
 * \brief FVectorize converters (see ir/vectorize.h) of nn_norm.cc's batch norm and dropout.
 *
 * Batch norm keeps its statistics per iteration by merging the iterations into the channel
 * axis. dropout draws once for all iterations: element-wise independent draws over [n] + shape
 * are per-iteration independent draws.
 */
#include <string>
#include <vector>

#include "ir/vectorize.h"
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

}  // namespace

IR_REGISTER_OP(batch_norm).set_attr<FVectorize>("FVectorize", BatchNormVectorize<1>);
IR_REGISTER_OP(batch_norm_grad).set_attr<FVectorize>("FVectorize", BatchNormVectorize<2>);
IR_REGISTER_OP(dropout).set_attr<FVectorize>("FVectorize", DropoutVectorize);

}  // namespace op
}  // namespace ir
