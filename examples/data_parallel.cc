/*!
 * \file data_parallel.cc
 * \brief Data-parallel training in C++ (include/ir/collective.h, docs/DISTRIBUTED.md): every
 * process trains the same softmax-regression model on its own shard of the data; each gradient
 * is averaged over the processes by an `allreduce` node before the SGD update, so the replicas
 * stay identical. The parameters start from rank 0's values (Broadcast), and at the end every
 * rank checks that its parameters are bit-identical to rank 0's (Allgather).
 *
 * Usage: ir-data-parallel-example                     (one process: the "local" transport)
 *        mpirun -np 2 ir-data-parallel-example        (Open MPI; see docs/DISTRIBUTED.md for root/containers)
 *        mpiexec.mpich -np 2 ir-data-parallel-example (MPICH)
 */
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/autodiff.h"
#include "ir/collective.h"
#include "ir/runtime.h"

namespace {

namespace coll = ir::collective;
using ir::NDArray;
using ir::NodeEntry;

constexpr int64_t kDim = 12, kClasses = 3, kBatch = 32;

/*!
 * \brief Step `step` of shard `rank`: points around 3 class centres, labels the centre's index.
 * Each rank draws from its own stream, as each would read its own part of a data set.
 */
std::unordered_map<std::string, NDArray> Shard(int rank, int step) {
  std::mt19937_64 rng(1000003ull * static_cast<uint64_t>(rank) + static_cast<uint64_t>(step));
  std::normal_distribution<float> noise(0.f, 0.5f);
  NDArray x(ir::Shape{kBatch, kDim}, ir::DType::kFloat32);
  NDArray y(ir::Shape{kBatch}, ir::DType::kInt32);
  for (int64_t i = 0; i < kBatch; ++i) {
    int32_t label = static_cast<int32_t>(rng() % kClasses);
    y.data<int32_t>()[i] = label;
    for (int64_t j = 0; j < kDim; ++j)
      x.data<float>()[i * kDim + j] = (j % kClasses == label ? 1.5f : -0.5f) + noise(rng);
  }
  return {{"x", x}, {"labels", y}};
}

/*! \brief Values that differ per rank, so that starting from rank 0's (Broadcast) is visible. */
NDArray RankRandom(const ir::Shape& shape, int rank) {
  std::mt19937 rng(static_cast<unsigned>(rank) + 7u);
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  NDArray out(shape, ir::DType::kFloat32);
  for (int64_t i = 0; i < out.Size(); ++i) out.data<float>()[i] = uniform(rng);
  return out;
}

/*! \brief Whether every rank holds exactly (bit for bit) rank 0's `value`. */
bool SameOnEveryRank(const std::string& name, const NDArray& value) {
  NDArray all = coll::Allgather("check/" + name, value.Reshape(ir::Shape{1, value.Size()}));
  for (int r = 1; r < coll::Size(); ++r) {
    if (std::memcmp(all.data<float>(), all.data<float>() + r * value.Size(), value.nbytes()) != 0) return false;
  }
  return true;
}

}  // namespace

int main() {
  try {
    // 1. Join the process group: MPI when launched by mpirun/mpiexec, else one "local" process.
    coll::Init();
    const int rank = coll::Rank(), size = coll::Size();
    if (rank == 0)
      std::cout << "data-parallel training on " << size << " process(es) over " << coll::TransportName() << "\n";

    // 2. The model: logits = x w + b, loss = mean softmax cross-entropy.
    NodeEntry x{ir::Node::CreateVariable("x"), 0}, labels{ir::Node::CreateVariable("labels"), 0};
    std::vector<NodeEntry> params = {NodeEntry{ir::Node::CreateVariable("w", {{"__kind__", "variable"}}), 0},
                                     NodeEntry{ir::Node::CreateVariable("b", {{"__kind__", "variable"}}), 0}};
    NodeEntry logits = ir::MakeNode("bias_add", "logits", {ir::MakeNode("matmul", "xw", {x, params[0]}), params[1]});
    NodeEntry loss = ir::MakeNode("mean", "loss",
                                  {ir::MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {logits, labels})});

    // 3. The update: p -= lr * allreduce_average(dloss/dp). The tensor_name is what the ranks
    //    agree on; the Session packs the allreduces into buckets and overlaps them with backward.
    std::vector<NodeEntry> grads = ir::Gradients({loss}, params), updates;
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string& name = params[i].node->attrs.name;
      NodeEntry avg = ir::MakeNode("allreduce", "avg_grad_" + name, {grads[i]},
                                   {{"reduce_op", "average"}, {"tensor_name", "grad/" + name}});
      NodeEntry step = ir::MakeNode("multiply_scalar", "lr_" + name, {avg}, {{"scalar", "0.5"}});
      updates.push_back(ir::MakeNode("assign_sub", "sgd_" + name, {params[i], step}));
    }
    NodeEntry train = ir::MakeNode("group", "train", updates);

    // 4. Every replica starts from rank 0's parameters.
    ir::Session sess;
    sess.variables().Set("w", coll::Broadcast("init/w", RankRandom({kDim, kClasses}, rank), 0));
    sess.variables().Set("b", coll::Broadcast("init/b", RankRandom({kClasses}, rank), 0));

    // 5. Train; rank 0 prints the loss averaged over the ranks' shards.
    for (int step = 0; step <= 40; ++step) {
      NDArray local = sess.Run({loss}, Shard(rank, step), {train.node})[0];
      NDArray mean = coll::Allreduce("loss", local, coll::ReduceOp::kAverage);
      if (rank == 0 && step % 10 == 0) std::cout << "step " << step << " loss " << mean.ToVector<float>()[0] << "\n";
    }

    // 6. The replicas must not drift apart: the averaged gradients are the same bits everywhere.
    bool same = true;
    for (const char* name : {"w", "b"})
      same = SameOnEveryRank(name, sess.variables().Read(name, ir::Device::CPU())) && same;
    if (rank == 0) std::cout << "parameters identical on all " << size << " ranks: " << (same ? "yes" : "NO") << "\n";
    coll::Shutdown();
    return same ? 0 : 1;
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
}
