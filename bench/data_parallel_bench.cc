/*!
 * \file data_parallel_bench.cc
 * \brief Weak scaling of data-parallel training: every rank trains the same model on its own
 * batch of 64 MNIST-shaped images; each gradient goes through the `allreduce` op (average) before
 * its SGD update, and the Session buckets the allreduces and overlaps them with the backward pass
 * (SessionOptions::collective_bucket_bytes). Launched once per rank count by
 * bench/data_parallel_scaling.sh, which prints the efficiencies.
 *
 * Per (model, bucket size) this prints one `RESULT` line on rank 0:
 *  - steps/s of the slowest rank: median (and best) over --reps repetitions of --steps steps, after
 *    warm-up, every repetition started together on all ranks (a barrier). Other processes on the
 *    cores only slow a repetition down, so on a shared machine the best is the less disturbed figure;
 *  - from --profile-steps profiled steps (a second session with SessionOptions::profile):
 *    blocked = ms per step the executor spent in the nodes that wait for collectives (`allreduce`
 *    when unbucketed, `_allreduce_wait`; copying the results out included), transport = ms per step the engine's thread
 * spent in the transport's data collectives (EngineStats::transport_ms), hidden = 1 - blocked / transport: the share of
 * the allreduce time the compute thread did not wait for (negative when it also waited for a slower rank). With
 * --timeline PATH (the engine replaces a "%r" in it by the rank) the engine writes a Chrome trace; the timed steps are
 * marked as "bench" spans. It records every node: time with it off.
 *
 * Usage: ir-data-parallel-bench [--models lenet,wide] [--buckets 0,1,25] [--batch 64]
 *        [--steps 20] [--reps 7] [--warmup 3] [--profile-steps 10] [--timeline PATH]
 * --buckets: SessionOptions::collective_bucket_bytes in MiB; 0 = every allreduce synchronous;
 * -1 = the step without allreduce nodes (plain training, the strict baseline of efficiency); auto = the Session's
 * default buckets (a 1 MiB first bucket, then 25 MiB or a quarter of the gradients' bytes when that is less).
 */
#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_common.h"
#include "ir/autodiff.h"
#include "ir/collective.h"
#include "ir/runtime.h"

namespace {

using ir::NDArray;
using ir::NodeEntry;
namespace coll = ir::collective;

/*! \brief A training step: its loss, its train op, and its parameters' initial values. */
struct Model {
  std::string name;
  NodeEntry loss;
  NodeEntry train;
  std::map<std::string, NDArray> init;
  int64_t param_bytes = 0;
};

/*! \brief Builds a model's layers, recording each parameter with a fixed-seed initial value. */
class Builder {
 public:
  explicit Builder(Model* model) : model_(model) {}

  NodeEntry Param(const std::string& name, const ir::Shape& shape, float scale) {
    NDArray value = ir::bench::Random(shape, static_cast<unsigned>(params_.size() + 1), -scale, scale);
    model_->init[name] = value;
    model_->param_bytes += static_cast<int64_t>(value.nbytes());
    params_.push_back(NodeEntry{ir::Node::CreateVariable(name, {{"__kind__", "variable"}}), 0});
    return params_.back();
  }
  /*! \brief conv 5x5 SAME + bias + relu, then 2x2 max pooling. */
  NodeEntry ConvReluPool(const NodeEntry& x, int64_t in_ch, int64_t out_ch, const std::string& name) {
    NodeEntry w = Param(name + "_W", {5, 5, in_ch, out_ch}, 0.1f);
    NodeEntry b = Param(name + "_b", {out_ch}, 0.01f);
    NodeEntry conv = ir::MakeNode("conv2d", name, {x, w}, {{"padding", "SAME"}});
    NodeEntry act = ir::MakeNode("relu", name + "_relu", {ir::MakeNode("bias_add", name + "_bias", {conv, b})});
    return ir::MakeNode("max_pool2d", name + "_pool", {act}, {{"ksize", "2"}, {"strides", "2"}, {"padding", "SAME"}});
  }
  NodeEntry Dense(const NodeEntry& x, int64_t in, int64_t out, const std::string& name, bool relu) {
    NodeEntry w = Param(name + "_W", {in, out}, 0.05f);
    NodeEntry b = Param(name + "_b", {out}, 0.01f);
    NodeEntry y = ir::MakeNode("bias_add", name + "_bias", {ir::MakeNode("matmul", name, {x, w}), b});
    return relu ? ir::MakeNode("relu", name + "_relu", {y}) : y;
  }
  /*!
   * \brief loss = mean softmax cross-entropy; each gradient averaged over the ranks by an
   * `allreduce` node named after its parameter, then p -= lr * allreduce(grad).
   */
  void Finish(const NodeEntry& logits, double lr, bool allreduce) {
    NodeEntry labels{ir::Node::CreateVariable("labels"), 0};
    NodeEntry xent = ir::MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {logits, labels});
    model_->loss = ir::MakeNode("mean", "loss", {xent});
    std::vector<NodeEntry> grads = ir::Gradients({model_->loss}, params_);
    std::vector<NodeEntry> updates;
    for (size_t i = 0; i < params_.size(); ++i) {
      const std::string& name = params_[i].node->attrs.name;
      NodeEntry avg = allreduce ? ir::MakeNode("allreduce", "allreduce_" + name, {grads[i]},
                                               {{"reduce_op", "average"}, {"tensor_name", "grad/" + name}})
                                : grads[i];
      NodeEntry step = ir::MakeNode("multiply_scalar", "lr_" + name, {avg}, {{"scalar", std::to_string(lr)}});
      updates.push_back(ir::MakeNode("assign_sub", "sgd_" + name, {params_[i], step}));
    }
    model_->train = ir::MakeNode("group", "train", updates);
  }

 private:
  Model* model_;
  std::vector<NodeEntry> params_;
};

/*! \brief "lenet": LeNet-small of tinyflow_demo/train.py (conv 16, conv 32, fc 256); "wide": conv 32, conv 64, fc 1024.
 */
Model BuildModel(const std::string& name, bool allreduce) {
  IR_CHECK(name == "lenet" || name == "wide") << "unknown model '" << name << "' (lenet, wide)";
  const bool wide = name == "wide";
  const int64_t c1 = wide ? 32 : 16, c2 = wide ? 64 : 32, fc = wide ? 1024 : 256;
  Model model;
  model.name = name;
  Builder b(&model);
  NodeEntry images{ir::Node::CreateVariable("images"), 0};
  NodeEntry h = b.ConvReluPool(b.ConvReluPool(images, 1, c1, "conv1"), c1, c2, "conv2");
  h = ir::MakeNode("reshape", "flat", {h}, {{"shape", "(-1, " + std::to_string(7 * 7 * c2) + ")"}});
  h = b.Dense(h, 7 * 7 * c2, fc, "fc1", true);
  b.Finish(b.Dense(h, fc, 10, "fc2", false), 0.01, allreduce);
  return model;
}

/*! \brief This rank's batch: MNIST-shaped random images and labels, fixed seed per rank. */
std::unordered_map<std::string, NDArray> Batch(int64_t batch, int rank) {
  NDArray labels(ir::Shape{batch}, ir::DType::kInt32);
  for (int64_t i = 0; i < batch; ++i) labels.data<int32_t>()[i] = static_cast<int32_t>((i * 7 + rank * 3) % 10);
  return {{"images", ir::bench::Random({batch, 28, 28, 1}, 1000u + static_cast<unsigned>(rank), 0.f, 1.f)},
          {"labels", labels}};
}

/*! \brief Returns when every rank called it (a one-float allreduce through the engine). */
void Barrier() { coll::Allreduce("bench/barrier", NDArray::Scalar<float>(1.f), coll::ReduceOp::kSum); }

/*! \brief The largest of every rank's `value`. */
double MaxOverRanks(double value) {
  NDArray all = coll::Allgather("bench/max", NDArray::FromVector<double>({1}, {value}));
  std::vector<double> v = all.ToVector<double>();
  return *std::max_element(v.begin(), v.end());
}

struct Options {
  std::vector<std::string> models = {"lenet", "wide"};
  std::vector<double> buckets_mib = {0, 1, 25};
  int64_t batch = 64;
  int steps = 20, reps = 7, warmup = 3, profile_steps = 10;
  std::string timeline;
};

/*! \brief --buckets value "auto": the Session's default buckets. */
constexpr double kAutoBuckets = -2;

ir::SessionOptions SessionFor(double bucket_mib, bool profile) {
  ir::SessionOptions options;  // auto: the defaults (1 MiB first, then 25 MiB or a quarter of the gradients)
  if (bucket_mib != kAutoBuckets) {
    options.collective_bucket_bytes = static_cast<int64_t>(std::max(bucket_mib, 0.0) * (1 << 20));
    // DDP's small first bucket (1 MiB), so the first allreduce starts early; never above the bucket size.
    options.collective_first_bucket_bytes = std::min<int64_t>(options.collective_bucket_bytes, 1 << 20);
  }
  options.profile = profile;
  return options;
}

std::unique_ptr<ir::Session> NewSession(const Model& model, const ir::SessionOptions& options) {
  auto sess = std::make_unique<ir::Session>(options);
  for (const auto& kv : model.init) sess->variables().Set(kv.first, kv.second.CopyTo(ir::Device::CPU()));
  return sess;
}

/*! \brief Steps/s of the slowest rank in each repetition, sorted; marks each timed step on the timeline. */
std::vector<double> StepsPerSecond(ir::Session* sess, const Model& model, const Options& opt,
                                   const std::unordered_map<std::string, NDArray>& feeds) {
  for (int i = 0; i < opt.warmup; ++i) sess->Run({model.loss}, feeds, {model.train.node});
  std::vector<double> rates;
  for (int rep = 0; rep < opt.reps; ++rep) {
    Barrier();
    double start = ir::bench::NowMs();
    for (int i = 0; i < opt.steps; ++i) {
      double begin_us = coll::Microseconds();
      sess->Run({model.loss}, feeds, {model.train.node});
      coll::TimelineRecord(model.name + " step " + std::to_string(i), "bench", begin_us, coll::Microseconds());
    }
    double slowest_ms = MaxOverRanks(ir::bench::NowMs() - start);
    rates.push_back(opt.steps * 1000.0 / slowest_ms);
  }
  std::sort(rates.begin(), rates.end());
  return rates;
}

struct Overlap {
  double blocked_ms = 0, transport_ms = 0, start_ms = 0;
};

/*! \brief Per-step ms the executor spent waiting for collectives vs the engine's transport time. */
Overlap MeasureOverlap(const Model& model, double bucket_mib, const Options& opt,
                       const std::unordered_map<std::string, NDArray>& feeds) {
  auto sess = NewSession(model, SessionFor(bucket_mib, true));
  for (int i = 0; i < std::max(1, opt.warmup); ++i) sess->Run({model.loss}, feeds, {model.train.node});
  Barrier();
  coll::ResetStats();
  Overlap o;
  for (int i = 0; i < opt.profile_steps; ++i) {
    sess->Run({model.loss}, feeds, {model.train.node});
    for (const ir::NodeProfile& node : sess->last_stats().nodes) {
      if (node.op == "allreduce" || node.op == "_allreduce_wait") o.blocked_ms += node.ms;
      if (node.op == "_allreduce_start") o.start_ms += node.ms;
    }
  }
  o.transport_ms = coll::Stats().transport_ms;
  const double n = std::max(1, opt.profile_steps);
  o.blocked_ms /= n;
  o.start_ms /= n;
  o.transport_ms /= n;
  return o;
}

/*! \brief Times model `name` at each bucket size (-1: without allreduce nodes); rank 0 prints a RESULT line each. */
void RunModel(const std::string& name, const Options& opt) {
  auto feeds = Batch(opt.batch, coll::Rank());
  for (double bucket : opt.buckets_mib) {
    Model model = BuildModel(name, bucket != -1);
    auto sess = NewSession(model, SessionFor(bucket, false));
    std::vector<double> rates = StepsPerSecond(sess.get(), model, opt, feeds);
    double rate = ir::bench::Median(rates);
    Overlap o = opt.profile_steps > 0 && bucket != -1 ? MeasureOverlap(model, bucket, opt, feeds) : Overlap();
    if (coll::Rank() != 0) continue;
    std::cout << std::fixed << std::setprecision(3) << "RESULT model=" << name << " np=" << coll::Size()
              << " transport=" << coll::TransportName() << " bucket_mib=" << bucket
              << " param_mib=" << model.param_bytes / double(1 << 20) << " batch=" << opt.batch
              << " steps_per_s=" << rate << " best_steps_per_s=" << rates.back() << " ms_per_step=" << 1000.0 / rate
              << " blocked_ms=" << o.blocked_ms << " start_ms=" << o.start_ms << " transport_ms=" << o.transport_ms
              << " hidden="
              << (coll::Size() > 1 && o.transport_ms > 0 ? 1.0 - o.blocked_ms / o.transport_ms
                                                         : std::numeric_limits<double>::quiet_NaN())
              << std::endl;
  }
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Options ParseArgs(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    IR_CHECK(i + 1 < argc) << "option " << arg << " needs a value (see the usage in bench/data_parallel_bench.cc)";
    std::string value = argv[++i];
    if (arg == "--models") {
      opt.models = SplitList(value);
    } else if (arg == "--buckets") {
      opt.buckets_mib.clear();
      for (const std::string& b : SplitList(value))
        opt.buckets_mib.push_back(b == "auto" ? kAutoBuckets : std::stod(b));
    } else if (arg == "--batch") {
      opt.batch = std::stoll(value);
    } else if (arg == "--steps") {
      opt.steps = std::stoi(value);
    } else if (arg == "--reps") {
      opt.reps = std::stoi(value);
    } else if (arg == "--warmup") {
      opt.warmup = std::stoi(value);
    } else if (arg == "--profile-steps") {
      opt.profile_steps = std::stoi(value);
    } else if (arg == "--timeline") {
      opt.timeline = value;
    } else {
      IR_CHECK(false) << "unknown option " << arg << " (see the usage in bench/data_parallel_bench.cc)";
    }
  }
  IR_CHECK(opt.steps > 0 && opt.reps > 0) << "--steps and --reps must be positive";
  return opt;
}

/*! \brief The rank the launcher gave this process (before Init): Open MPI's or Hydra's variable, else 0. */
std::string LauncherRank() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(var)) return value;
  }
  return "0";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options opt = ParseArgs(argc, argv);
    coll::InitOptions init;
    init.timeline = opt.timeline;  // the engine writes rank r's events to the path with "%r" replaced by r
    coll::Init(init);
    for (const std::string& model : opt.models) RunModel(model, opt);
    coll::Shutdown();
  } catch (const std::exception& err) {
    std::cerr << "rank " << LauncherRank() << ": error: " << err.what() << std::endl;
    return 1;
  }
  return 0;
}
