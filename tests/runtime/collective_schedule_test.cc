// Allreduce in a training step, in one process (the "local" transport): ScheduleCollectives
// splits the allreduce nodes into bucketed start/wait pairs, issues each bucket as soon as its
// gradients exist and waits only after the backward pass; training with allreduce(average)
// equals training without it, fused or not, bucketed or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/autodiff.h"
#include "ir/collective.h"
#include "ir/op.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

NodeEntry Input(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }
NodeEntry Param(const std::string& name) {
  return NodeEntry{Node::CreateVariable(name, {{"__kind__", "variable"}}), 0};
}

/*! \brief A three-layer perceptron's loss and its parameters (w1 b1 w2 b2 w3 b3, first layer first). */
struct Mlp {
  std::vector<NodeEntry> params;
  NodeEntry loss;
  std::map<std::string, NDArray> init;
};

Mlp BuildMlp() {
  Mlp m;
  const int64_t dims[] = {20, 32, 16, 3};
  NodeEntry h = Input("x");
  for (int layer = 1; layer <= 3; ++layer) {
    std::string w = "w" + std::to_string(layer), b = "b" + std::to_string(layer);
    m.params.push_back(Param(w));
    m.params.push_back(Param(b));
    m.init[w] = test::RandomArray(Shape{dims[layer - 1], dims[layer]}, DType::kFloat32, layer, -0.3, 0.3);
    m.init[b] = test::RandomArray(Shape{dims[layer]}, DType::kFloat32, 10 + layer, -0.1, 0.1);
    h = MakeNode(
        "bias_add", "dense" + std::to_string(layer),
        {MakeNode("matmul", "mm" + std::to_string(layer), {h, m.params[m.params.size() - 2]}), m.params.back()});
    if (layer < 3) h = MakeNode("relu", "relu" + std::to_string(layer), {h});
  }
  NodeEntry xent = MakeNode("sparse_softmax_cross_entropy_with_logits", "xent", {h, Input("labels")});
  m.loss = MakeNode("mean", "loss", {xent});
  return m;
}

/*! \brief SGD on every parameter, each gradient allreduce-averaged first when `allreduce`. */
NodeEntry SgdStep(const Mlp& m, bool allreduce) {
  std::vector<NodeEntry> grads = Gradients({m.loss}, m.params);
  std::vector<NodeEntry> updates;
  for (size_t i = 0; i < m.params.size(); ++i) {
    const std::string& name = m.params[i].node->attrs.name;
    NodeEntry g = grads[i];
    if (allreduce) g = MakeNode("allreduce", "allreduce_" + name, {g}, {{"reduce_op", "average"}});
    NodeEntry step = MakeNode("multiply_scalar", "lr_" + name, {g}, {{"scalar", "0.2"}});
    updates.push_back(MakeNode("assign_sub", "sgd_" + name, {m.params[i], step}));
  }
  return MakeNode("group", "train", updates);
}

std::unordered_map<std::string, NDArray> Batch(int step) {
  NDArray x = test::RandomArray(Shape{16, 20}, DType::kFloat32, 100 + step);
  NDArray y(Shape{16}, DType::kInt32);
  for (int i = 0; i < 16; ++i) y.data<int32_t>()[i] = (i * 7 + step) % 3;
  return {{"x", x}, {"labels", y}};
}

class CollectiveScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    collective::InitOptions options;
    options.transport = "local";
    collective::Init(options);
  }
};

/*! \brief Positions of each node name in the bound graph's execution order. */
std::map<std::string, uint32_t> Positions(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  std::map<std::string, uint32_t> at;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) at[idx[nid].source->attrs.name] = nid;
  return at;
}

TEST_F(CollectiveScheduleTest, StartsEachBucketWhenItsGradientsExistAndWaitsAfterTheBackwardPass) {
  Mlp m = BuildMlp();
  NodeEntry train = SgdStep(m, true);
  SessionOptions options;
  options.collective_first_bucket_bytes = 0;  // every bucket but the first may hold several gradients
  options.collective_bucket_bytes = 2100;     // w3 (192 B) + b3 + w2 (2048 B) do not fit together
  Session sess(options);
  for (const auto& kv : m.init) sess.variables().Set(kv.first, kv.second);
  sess.Run({m.loss}, Batch(0), {train.node});
  const Graph& bound = sess.last_graph();
  const IndexedGraph& idx = bound.indexed_graph();
  std::map<std::string, uint32_t> at = Positions(bound);
  std::vector<uint32_t> starts, waits;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) continue;
    EXPECT_NE(node->op()->name, "allreduce") << node->attrs.name << " was not split";
    if (node->op()->name == "_allreduce_start") starts.push_back(nid);
    if (node->op()->name == "_allreduce_wait") waits.push_back(nid);
  }
  ASSERT_EQ(starts.size(), 6u);
  ASSERT_EQ(waits.size(), 6u);
  EXPECT_LT(starts.back(), waits.front()) << "a wait runs before every bucket was started";
  // The last layer's gradients are started before the first layer's gradient is even computed.
  uint32_t w1_grad = idx[at.at("allreduce_w1/start")].inputs[0].node_id;
  EXPECT_LT(at.at("allreduce_w3/start"), w1_grad);
  EXPECT_LT(at.at("allreduce_w2/start"), w1_grad);
  // Buckets in issue order: the first of one gradient (its cap is 0 bytes), then runs of consecutive starts
  // of at most 2100 bytes, members indexed in order, keys naming the members.
  const auto& shapes = bound.GetAttr<ShapeVector>("shape");
  std::vector<std::vector<std::string>> buckets;
  std::vector<int64_t> bytes;
  std::string key;
  for (uint32_t nid : starts) {
    const auto& dict = idx[nid].source->attrs.dict;
    if (dict.at("bucket") != key) {
      key = dict.at("bucket");
      buckets.emplace_back();
      bytes.push_back(0);
    }
    EXPECT_EQ(std::stoi(dict.at("index")), static_cast<int>(buckets.back().size())) << key;
    buckets.back().push_back(dict.at("tensor_name"));
    bytes.back() += shapes[idx.entry_id(idx[nid].inputs[0])].Size() * 4;
  }
  ASSERT_GE(buckets.size(), 3u);
  EXPECT_EQ(buckets[0].size(), 1u);
  std::set<std::string> keys;
  for (size_t b = 0; b < buckets.size(); ++b) {
    std::string joined;
    for (const std::string& name : buckets[b]) joined += (joined.empty() ? "" : ",") + name;
    EXPECT_TRUE(keys.insert(joined).second) << "bucket " << joined << " appears twice: its members are not consecutive";
    EXPECT_TRUE(buckets[b].size() == 1 || bytes[b] <= 2100) << joined << " holds " << bytes[b] << " bytes";
    if (b + 1 < buckets.size() && b > 0) {
      EXPECT_GT(bytes[b] + bytes[b + 1], 2100) << joined << " and the next bucket would have fit together";
    }
  }
  for (uint32_t nid : starts) {
    const auto& dict = idx[nid].source->attrs.dict;
    EXPECT_TRUE(keys.count(dict.at("bucket"))) << dict.at("bucket");
    EXPECT_EQ(std::to_string(std::count(dict.at("bucket").begin(), dict.at("bucket").end(), ',') + 1),
              dict.at("num_members"));
  }
}

TEST_F(CollectiveScheduleTest, ZeroBucketBytesKeepsAllreduceSynchronous) {
  Mlp m = BuildMlp();
  NodeEntry train = SgdStep(m, true);
  SessionOptions options;
  options.collective_bucket_bytes = 0;
  Session sess(options);
  for (const auto& kv : m.init) sess.variables().Set(kv.first, kv.second);
  sess.Run({m.loss}, Batch(0), {train.node});
  std::map<std::string, uint32_t> at = Positions(sess.last_graph());
  EXPECT_EQ(at.count("allreduce_w1/start"), 0u);
  EXPECT_EQ(at.count("allreduce_w1"), 1u);
}

/*! \brief Parameters after `steps` SGD steps. */
std::map<std::string, std::vector<float>> Train(bool allreduce, bool fusion, int64_t bucket_bytes, int steps) {
  Mlp m = BuildMlp();
  NodeEntry train = SgdStep(m, allreduce);
  SessionOptions options;
  options.fusion = fusion;
  options.collective_bucket_bytes = bucket_bytes;
  Session sess(options);
  for (const auto& kv : m.init) sess.variables().Set(kv.first, kv.second);
  for (int step = 0; step < steps; ++step) sess.Run({m.loss}, Batch(step), {train.node});
  std::map<std::string, std::vector<float>> params;
  for (const auto& kv : m.init) params[kv.first] = sess.variables().Get(kv.first).ToVector<float>();
  return params;
}

TEST_F(CollectiveScheduleTest, OneProcessTrainingWithAllreduceEqualsTrainingWithout) {
  auto plain = Train(false, true, 0, 5);
  for (bool fusion : {false, true}) {
    for (int64_t bucket_bytes : {int64_t{0}, int64_t{25} << 20}) {
      auto reduced = Train(true, fusion, bucket_bytes, 5);
      for (const auto& kv : plain) {
        const std::vector<float>& got = reduced.at(kv.first);
        ASSERT_EQ(got.size(), kv.second.size());
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], kv.second[i], 1e-6)
              << kv.first << "[" << i << "] fusion " << fusion << " bucket_bytes " << bucket_bytes;
        }
      }
    }
  }
  EXPECT_GT(collective::Stats().collectives, 0);
}

TEST_F(CollectiveScheduleTest, GradientOfAllreduceIsAllreduce) {
  NodeEntry x = Param("x");
  NodeEntry y = MakeNode("allreduce", "y", {x}, {{"reduce_op", "average"}});
  NodeEntry loss = MakeNode("sum", "loss", {MakeNode("square", "sq", {y})});
  std::vector<NodeEntry> grads = Gradients({loss}, {x});
  Session sess;
  sess.variables().Set("x", NDArray::FromVector<float>(Shape{3}, {1, -2, 3}));
  std::vector<NDArray> out = sess.Run({grads[0]}, {}, {});
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{2, -4, 6}));
  bool found = false;
  const IndexedGraph& idx = sess.last_graph().indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    found = found || (!node->is_variable() && node->attrs.name.rfind("y_grad", 0) == 0 &&
                      node->op()->name.find("allreduce") != std::string::npos);
  }
  EXPECT_TRUE(found) << "the gradient of allreduce has no allreduce";
}

TEST_F(CollectiveScheduleTest, GradientsOfAllgatherAndBroadcastInOneProcess) {
  for (const char* op : {"allgather", "broadcast"}) {
    NodeEntry x = Param("x");
    NodeEntry y = MakeNode(op, "y", {x});
    NodeEntry loss = MakeNode("sum", "loss", {MakeNode("square", "sq", {y})});
    std::vector<NodeEntry> grads = Gradients({loss}, {x});
    Session sess;
    sess.variables().Set("x", NDArray::FromVector<float>(Shape{2, 2}, {1, -2, 3, 0.5}));
    std::vector<NDArray> out = sess.Run({grads[0]}, {}, {});
    EXPECT_EQ(out[0].shape(), (Shape{2, 2})) << op;
    EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{2, -4, 6, 1})) << op;
  }
}

TEST_F(CollectiveScheduleTest, BadAttributesAreClearErrors) {
  NodeEntry x = Param("x");
  EXPECT_THROW(MakeNode("allreduce", "bad", {x}, {{"reduce_op", "max"}}), Error);
  EXPECT_THROW(MakeNode("_allreduce_start", "bad2", {x}, {{"num_members", "2"}, {"index", "2"}}), Error);
  try {
    MakeNode("allreduce", "bad3", {x}, {{"reduce_op", "product"}});
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("reduce_op must be \"sum\" or \"average\""), std::string::npos)
        << err.what();
  }
}

TEST_F(CollectiveScheduleTest, AllgatherAndBroadcastInOneProcess) {
  NodeEntry x = Param("x");
  NodeEntry gathered = MakeNode("allgather", "gathered", {x});
  NodeEntry sent = MakeNode("broadcast", "sent", {x}, {{"root_rank", "0"}});
  Session sess;
  sess.variables().Set("x", NDArray::FromVector<float>(Shape{2, 2}, {1, 2, 3, 4}));
  std::vector<NDArray> out = sess.Run({gathered, sent}, {}, {});
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(out[1].ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  NodeEntry bad = MakeNode("broadcast", "bad_root", {x}, {{"root_rank", "1"}});
  EXPECT_THROW(sess.Run({bad}, {}, {}), Error);
}

}  // namespace
}  // namespace ir
