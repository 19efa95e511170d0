/*!
 * \file real_graphs_test.cc
 * \brief Graphs TensorFlow itself wrote (../shared/tf_graphs, see its README): each imports,
 * infers every shape, runs, and matches what TensorFlow computed.
 */
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <random>

#include "ir/pass.h"
#include "ir_tf/import.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ExpectClose;
using test::ReadCsv;
using test::ReadShapeFile;

/*! \brief One dl4j oracle: `<node>.0.prediction_inbw.csv` (or output.prediction.csv) and its shape. */
struct Oracle {
  std::string node, csv, shape;
};

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/*! \brief Every intermediate oracle in `dir` (`____` in file names stands for `/`). */
std::vector<Oracle> Oracles(const std::string& dir) {
  std::vector<Oracle> out;
  const std::string suffix = ".0.prediction_inbw.csv";
  for (const std::string& name : ListDir(dir)) {
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::string base = name.substr(0, name.size() - 4);
    out.push_back({Replace(name.substr(0, name.size() - suffix.size()), "____", "/"), dir + "/" + name,
                   dir + "/" + base + ".shape"});
  }
  return out;
}

/*! \brief The placeholder fed by the oracle's `<name>.placeholder.csv`. */
std::map<std::string, NDArray> OracleFeeds(const std::string& dir, const TFModel& model) {
  std::map<std::string, NDArray> feeds;
  const std::string suffix = ".placeholder.csv";
  for (const std::string& name : ListDir(dir)) {
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::string node = name.substr(0, name.size() - suffix.size());
    Shape shape = ReadShapeFile(dir + "/" + node + ".placeholder.shape");
    feeds[node] = test::MakeArray(shape, FindInputSpec(model, node).dtype, ReadCsv(dir + "/" + name));
  }
  return feeds;
}

/*! \brief Fetches every oracle the graph has a node for (and `output`), comparing values and shapes. */
void CheckOracles(TFSession* session, const std::string& dir, const std::map<std::string, NDArray>& feeds,
                  bool fusion_label) {
  std::vector<std::string> nodes = NodeNames(session->model());
  std::vector<Oracle> oracles = Oracles(dir);
  oracles.push_back({"output", dir + "/output.prediction.csv", dir + "/output.prediction.shape"});
  std::vector<std::string> fetches;
  std::vector<Oracle> checked;
  for (const Oracle& o : oracles) {
    if (std::find(nodes.begin(), nodes.end(), o.node) == nodes.end()) continue;
    fetches.push_back(o.node);
    checked.push_back(o);
  }
  ASSERT_GE(checked.size(), 2u) << dir;
  std::vector<NDArray> values = session->Run(feeds, fetches);
  for (size_t i = 0; i < checked.size(); ++i) {
    std::string what = dir + ": " + checked[i].node + (fusion_label ? " (fused)" : " (unfused)");
    EXPECT_EQ(values[i].Size(), ReadShapeFile(checked[i].shape).Size()) << what;
    ExpectClose(values[i], ReadCsv(checked[i].csv), what);
  }
}

SessionOptions Options(bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  return options;
}

class Dl4jGraphTest : public ::testing::TestWithParam<std::string> {};

/*! \brief The frozen graphs, binary and text, unfused and fused, against every oracle. */
TEST_P(Dl4jGraphTest, FrozenGraphsMatchTensorFlow) {
  IR_TF_REQUIRE(dir, "dl4j-test-resources/" + GetParam());
  for (const char* file : {"frozen_model.pb", "frozen_graph.pbtxt"}) {
    for (bool fusion : {false, true}) {
      TFModel model = LoadModel(dir + "/" + file);
      TFSession session(model, Options(fusion));
      CheckOracles(&session, dir, OracleFeeds(dir, model), fusion);
    }
  }
}

/*!
 * \brief The unfrozen training-time graphs (model.txt): the initializer runs, and with the
 * variables set to the oracle's values the graph computes TensorFlow's outputs.
 */
TEST_P(Dl4jGraphTest, UnfrozenGraphsRunTheirInitializerAndMatchWithOracleVariables) {
  IR_TF_REQUIRE(dir, "dl4j-test-resources/" + GetParam());
  TFModel model = LoadModel(dir + "/model.txt");
  TFSession session(model, Options(true));
  session.Run({}, {}, {"init"});
  std::vector<std::string> nodes = NodeNames(model);
  for (const Oracle& o : Oracles(dir)) {
    if (std::find(nodes.begin(), nodes.end(), o.node) == nodes.end() || o.node.find('/') != std::string::npos) continue;
    InputSpec spec = FindInputSpec(model, o.node);
    if (spec.dtype == DType::kUnknown || !session.session().variables().Has(o.node)) continue;
    session.session().variables().Set(o.node, test::MakeArray(ReadShapeFile(o.shape), spec.dtype, ReadCsv(o.csv)));
  }
  CheckOracles(&session, dir, OracleFeeds(dir, model), true);
}

INSTANTIATE_TEST_SUITE_P(RealGraphs, Dl4jGraphTest, ::testing::Values("mnist_00", "mlp_00", "conv_0"));

/*! \brief What one real graph is asked to compute, with the shapes of its feeds. */
struct ShapeCase {
  std::string path;
  std::vector<std::string> outputs;
  std::map<std::string, Shape> feeds;
};

TEST(RealGraphsTest, EveryGraphImportsWithAllShapesKnown) {
  const std::string dl4j = "dl4j-test-resources/";
  std::vector<ShapeCase> cases = {
      {dl4j + "mnist_00/model.txt",
       {"^GradientDescent", "Mean", "Mean_1", "^init"},
       {{"input", Shape{100, 784}}, {"target", Shape{100, 10}}}},
      {dl4j + "mnist_00/frozen_model.pb", {"output"}, {{"input", Shape{7, 784}}}},
      {dl4j + "mlp_00/model.txt", {"output", "^init"}, {{"input", Shape{4, 5}}}},
      {dl4j + "mlp_00/frozen_graph.pbtxt", {"output"}, {{"input", Shape{4, 5}}}},
      {dl4j + "conv_0/model.txt", {"output", "^init"}, {{"image", Shape{4, 28, 28, 3}}}},
      {dl4j + "conv_0/frozen_model.pb", {"output"}, {{"image", Shape{4, 28, 28, 3}}}},
      {"tensorflow-onnx/regression/checkpoint/model.meta",
       {"^GradientDescent", "pred", "^init"},
       {{"X", Shape{5}}, {"Y", Shape{5}}}},
      {"tensorflow-onnx/regression/graphdef/frozen.pb", {"pred"}, {{"X", Shape{5}}}},
      {"tensorflow-rust/regression/model.pb", {"^train", "^init"}, {{"x", Shape{100}}, {"y", Shape{100}}}},
      {"tensorflow-rust/addition/model.pb", {"z"}, {{"x", Shape::Scalar()}, {"y", Shape::Scalar()}}},
      {"tensorflow-serving/saved_model_half_plus_two_tf2_cpu",
       {"StatefulPartitionedCall_5"},
       {{"serving_default_x", Shape{1}}}},
  };
  for (const ShapeCase& c : cases) {
    std::string path = test::GraphPath(c.path);
    if (path.empty()) continue;
    ImportOptions options;
    options.outputs = c.outputs;
    options.feed_shapes = c.feeds;
    Graph g = ImportGraphDef(LoadModel(path).graph_def, options);
    g = ApplyPasses(g, {"InferShape", "InferType", "FoldConstants"});
    EXPECT_EQ(g.GetAttr<int>("shape_num_unknown_nodes"), 0)
        << c.path << ": " << Join(g.GetAttr<std::vector<std::string>>("shape_unknown_nodes"), "; ");
    EXPECT_EQ(g.GetAttr<int>("dtype_num_unknown_nodes"), 0) << c.path;
  }
}

TEST(RealGraphsTest, FrozenLinearRegressionComputesItsLine) {
  IR_TF_REQUIRE(path, "tensorflow-onnx/regression/graphdef/frozen.pb");
  TFSession session(LoadModel(path));
  NDArray x = NDArray::FromVector<float>(Shape{4}, {-1, 0, 2.5f, 10});
  std::vector<double> expected;
  for (float v : x.ToVector<float>()) expected.push_back(0.21396178 * v + 1.0495254);
  ExpectClose(session.Run({{"X", x}}, {"pred"})[0], expected, "pred");
}

TEST(RealGraphsTest, MetaGraphRestoresItsCheckpointAndTrains) {
  IR_TF_REQUIRE(path, "tensorflow-onnx/regression/checkpoint/model.meta");
  TFModel model = LoadModel(path);
  ASSERT_FALSE(model.checkpoint_prefix.empty()) << "model.index next to model.meta is the checkpoint";
  TFSession session(model);
  std::vector<std::string> restored = session.RestoreCheckpoint(model.checkpoint_prefix);
  EXPECT_NE(std::find(restored.begin(), restored.end(), "W"), restored.end());
  NDArray x = NDArray::FromVector<float>(Shape{3}, {1, 2, 3});
  NDArray y = NDArray::FromVector<float>(Shape{3}, {1.2f, 1.5f, 1.6f});
  ExpectClose(session.Run({{"X", x}}, {"pred"})[0],
              {0.21396178 + 1.0495254, 2 * 0.21396178 + 1.0495254, 3 * 0.21396178 + 1.0495254},
              "pred from the checkpoint");
  // One step of the training graph (unknown-rank placeholders; Pow's gradient uses Log and
  // Select; Sum over all axes of unknown rank uses Range/Rank/DynamicStitch) against the formula.
  double w = 0.21396178, b = 1.0495254, cost = 0, dw = 0, db = 0;
  std::vector<NDArray> before = session.Run({{"X", x}, {"Y", y}}, {"truediv", "truediv/y"});
  double denom = before[1].ToVector<float>()[0];
  for (int i = 0; i < 3; ++i) {
    double r = w * (i + 1) + b - y.ToVector<float>()[i];
    cost += r * r / denom;
    dw += 2 * r * (i + 1) / denom;
    db += 2 * r / denom;
  }
  ExpectClose(before[0], {cost}, "cost");
  session.Run({{"X", x}, {"Y", y}}, {}, {"GradientDescent"});
  std::vector<NDArray> after = session.Run({}, {"W", "b"});
  ExpectClose(after[0], {w - 0.02 * dw}, "W after one step");
  ExpectClose(after[1], {b - 0.02 * db}, "b after one step");
}

TEST(RealGraphsTest, RustRegressionRecipeConverges) {
  IR_TF_REQUIRE(path, "tensorflow-rust/regression/model.pb");
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> xs(100), ys(100);
  for (int i = 0; i < 100; ++i) {
    xs[i] = uniform(rng);
    ys[i] = 0.1f * xs[i] + 0.3f;
  }
  std::map<std::string, NDArray> feeds{{"x", NDArray::FromVector<float>(Shape{100}, xs)},
                                       {"y", NDArray::FromVector<float>(Shape{100}, ys)}};
  TFSession session(LoadModel(path));
  session.Run({}, {}, {"init"});
  for (int step = 0; step < 201; ++step) session.Run(feeds, {}, {"train"});
  std::vector<NDArray> wb = session.Run({}, {"w", "b"});
  EXPECT_NEAR(wb[0].ToVector<float>()[0], 0.1, 1e-3);
  EXPECT_NEAR(wb[1].ToVector<float>()[0], 0.3, 1e-3);
}

TEST(RealGraphsTest, AdditionAddsInt32Scalars) {
  IR_TF_REQUIRE(path, "tensorflow-rust/addition/model.pb");
  TFSession session(LoadModel(path));
  NDArray z = session.Run({{"x", NDArray::Scalar<int32_t>(2)}, {"y", NDArray::Scalar<int32_t>(40)}}, {"z"})[0];
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(z.ToVector<int32_t>(), std::vector<int32_t>{42});
}

TEST(RealGraphsTest, SavedModelComputesHalfPlusTwo) {
  IR_TF_REQUIRE(dir, "tensorflow-serving/saved_model_half_plus_two_tf2_cpu");
  TFModel model = LoadModel(dir);
  EXPECT_EQ(model.signature, "serving_default");
  EXPECT_EQ(model.ResolveName("x"), "serving_default_x:0");
  ASSERT_FALSE(model.checkpoint_prefix.empty());
  for (bool fusion : {false, true}) {
    TFSession session(model, Options(fusion));
    session.RestoreCheckpoint(model.checkpoint_prefix);
    ExpectClose(session.Run({{"x", NDArray::FromVector<float>(Shape{1}, {3})}}, {"y"})[0], {3.5}, "y(3)");
    ExpectClose(session.Run({{"x", NDArray::FromVector<float>(Shape{1}, {-8})}}, {"y"})[0], {-2}, "y(-8)");
    ExpectClose(session.Run({}, {"y"})[0], {2}, "y(default x = 0)");
  }
  EXPECT_ERROR(LoadModel(dir, "no_such_signature"), "has no signature 'no_such_signature' (it has: ");
}

}  // namespace
}  // namespace tf
}  // namespace ir
