#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "codegen/c_family_printer.h"
#include "codegen/kernel_builder.h"
#include "cuda_test_util.h"
#include "ir/codegen.h"
#include "ir/fusion.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ops/op_harness.h"
#include "ops/row_graphs.h"
#include "runtime/device/launch_table.h"

namespace ir {
namespace {

using test::Apply;
using test::Var;

std::map<std::string, NDArray> Feeds(const std::map<std::string, Shape>& shapes, DType dtype = DType::kFloat32) {
  std::map<std::string, NDArray> feeds;
  uint64_t seed = 1;
  for (const auto& kv : shapes) feeds[kv.first] = test::RandomArray(kv.second, dtype, seed++);
  return feeds;
}

std::vector<std::string> KernelNames(const std::string& source) {
  static const std::regex pattern(R"(__global__ __launch_bounds__\(256\) void (fused_[0-9a-f]+)\()");
  std::vector<std::string> names;
  for (std::sregex_iterator it(source.begin(), source.end(), pattern), end; it != end; ++it) names.push_back((*it)[1]);
  return names;
}

/*! \brief The launch table the "cuda" kernel compiler stores with the PTX of `source`. */
device::LaunchTable CompiledLaunches(const std::string& source) {
  device::LaunchTable launches;
  std::string ptx;
  device::UnpackBlob(KernelCompiler::Get("cuda").Compile(source), &launches, &ptx);
  EXPECT_NE(ptx.find(".version"), std::string::npos) << "the blob holds no PTX";
  return launches;
}

// The fused kernels of `graph` compile with NVRTC, assemble with ptxas, and carry their launches.
void ExpectFusedKernelsBuild(const Graph& graph, size_t min_kernels = 1, int fmax = 8) {
  std::string source = test::FusedCUDASource(graph, fmax);
  std::vector<std::string> names = KernelNames(source);
  ASSERT_GE(names.size(), min_kernels) << source;
  test::ExpectCompilesAndAssembles(source, "fused kernels");
  device::LaunchTable launches = CompiledLaunches(source);
  for (const std::string& name : names) {
    ASSERT_TRUE(launches.count(name)) << "no launch for " << name;
    EXPECT_GT(launches[name].groups, 0) << name;
    EXPECT_EQ(launches[name].group_size, 256) << name;
  }
}

TEST(CUDAPrinterTest, ElementwiseChainCompilesAndAssembles) {
  NodeEntry x = Var("x"), y = Var("y");
  NodeEntry out = Apply("tanh", "out", {Apply("add", "a", {Apply("multiply", "m", {Apply("exp", "e", {x}), y}), x})});
  ExpectFusedKernelsBuild(test::InferFromFeeds({out}, Feeds({{"x", Shape{16, 33}}, {"y", Shape{16, 33}}})));
}

TEST(CUDAPrinterTest, DiamondComputesSharedValueOnce) {
  NodeEntry x = Var("x");
  NodeEntry a = Apply("exp", "a", {x});
  NodeEntry d = Apply("add", "d", {Apply("sin", "b", {a}), Apply("cos", "c", {a})});
  Graph graph = test::InferFromFeeds({d}, Feeds({{"x", Shape{100}}}));
  std::string source = test::FusedCUDASource(graph);
  size_t first = source.find("expf(");
  ASSERT_NE(first, std::string::npos) << source;
  EXPECT_EQ(source.find("expf(", first + 1), std::string::npos) << source;
  ExpectFusedKernelsBuild(graph);
}

TEST(CUDAPrinterTest, BroadcastInputsCompile) {
  NodeEntry x = Var("x"), b = Var("b"), c = Var("c");
  NodeEntry out = Apply("multiply", "out", {Apply("add", "s", {x, b}), c});
  ExpectFusedKernelsBuild(
      test::InferFromFeeds({out}, Feeds({{"x", Shape{4, 5, 8}}, {"b", Shape{8}}, {"c", Shape{4, 1, 1}}})));
}

TEST(CUDAPrinterTest, ReductionsWithProloguesCompileInEveryShape) {
  // Short rows (a thread per output), long rows (a block per output) and columns (inner > 1).
  for (Shape shape : {Shape{64, 10}, Shape{8, 4096}, Shape{300, 7}}) {
    SCOPED_TRACE(StrCat("shape ", shape));
    NodeEntry a = Var("a"), b = Var("b");
    NodeEntry rows = Apply("sum", "rows", {Apply("multiply", "ab", {a, b})}, {{"axis", "1"}});
    NodeEntry cols = Apply("max", "cols", {Apply("exp", "ea", {a})}, {{"axis", "0"}});
    NodeEntry all = Apply("mean", "all", {Apply("square", "sq", {b})});
    ExpectFusedKernelsBuild(test::InferFromFeeds({rows, cols, all}, Feeds({{"a", shape}, {"b", shape}})), 3);
  }
}

TEST(CUDAPrinterTest, LogSoftmaxWrittenWithOpsCompiles) {
  NodeEntry x = Var("x");
  NodeEntry m = Apply("max", "m", {x}, {{"axis", "1"}, {"keepdims", "true"}});
  NodeEntry shifted = Apply("subtract", "shifted", {x, m});
  NodeEntry s = Apply("sum", "s", {Apply("exp", "e", {shifted})}, {{"axis", "1"}, {"keepdims", "true"}});
  NodeEntry out = Apply("subtract", "out", {shifted, Apply("log", "l", {s})});
  // One row kernel: max, then exp and sum, then the output pass.
  Graph graph = test::InferFromFeeds({out}, Feeds({{"x", Shape{64, 1000}}}));
  EXPECT_EQ(KernelNames(test::FusedCUDASource(graph)).size(), 1u);
  ExpectFusedKernelsBuild(graph);
}

TEST(CUDAPrinterTest, MultiOutputGroupCompiles) {
  NodeEntry x = Var("x"), w = Var("w");
  NodeEntry a = Apply("exp", "a", {x});
  NodeEntry b = Apply("multiply_scalar", "b", {a}, {{"scalar", "2"}});
  NodeEntry c = Apply("sigmoid", "c", {b});
  NodeEntry mm = Apply("matmul", "mm", {a, w});
  ExpectFusedKernelsBuild(test::InferFromFeeds({b, c, mm}, Feeds({{"x", Shape{4, 8}}, {"w", Shape{8, 3}}})));
}

TEST(CUDAPrinterTest, AdamUpdateCompiles) {
  NodeEntry g = Var("g"), m = Var("m"), v = Var("v"), w = Var("w");
  auto scale = [](const std::string& name, NodeEntry e, const char* s) {
    return Apply("multiply_scalar", name, {e}, {{"scalar", s}});
  };
  NodeEntry m1 = Apply("add", "m1", {scale("m_decay", m, "0.9"), scale("g_part", g, "0.1")});
  NodeEntry v1 =
      Apply("add", "v1", {scale("v_decay", v, "0.999"), scale("g2_part", Apply("square", "g2", {g}), "0.001")});
  NodeEntry step =
      Apply("divide", "step", {m1, Apply("add_scalar", "denom", {Apply("sqrt", "rv", {v1})}, {{"scalar", "1e-8"}})});
  NodeEntry w1 = Apply("subtract", "w1", {w, scale("lr_step", step, "0.001")});
  std::vector<NodeEntry> updates = {Apply("assign", "am", {m, m1}), Apply("assign", "av", {v, v1}),
                                    Apply("assign", "aw", {w, w1})};
  ExpectFusedKernelsBuild(test::InferFromFeeds(
      updates, Feeds({{"g", Shape{1000}}, {"m", Shape{1000}}, {"v", Shape{1000}}, {"w", Shape{1000}}})));
}

TEST(CUDAPrinterTest, EveryBufferDTypeCompiles) {
  // float64 math, bool outputs, int32 and int64 buffers, casts and selects between them.
  NodeEntry x = Var("x"), y = Var("y");
  NodeEntry gt = Apply("greater", "gt", {x, y});
  NodeEntry pick =
      Apply("where", "pick", {gt, Apply("exp", "ex", {x}), Apply("rsqrt", "ry", {Apply("abs", "ay", {y})})});
  NodeEntry as_int = Apply("cast", "as_int", {pick}, {{"dtype", "int32"}});
  NodeEntry as_long = Apply("cast", "as_long", {Apply("add", "sum", {as_int, as_int})}, {{"dtype", "int64"}});
  NodeEntry sum_long = Apply("sum", "sum_long", {as_long}, {{"axis", "1"}});
  Graph graph =
      test::InferFromFeeds({gt, pick, sum_long}, Feeds({{"x", Shape{6, 7}}, {"y", Shape{6, 7}}}, DType::kFloat64));
  ExpectFusedKernelsBuild(graph);
  std::string source = test::FusedCUDASource(graph);
  EXPECT_NE(source.find("uchar*"), std::string::npos) << source;
  EXPECT_NE(source.find("rsqrt("), std::string::npos) << source;
  EXPECT_EQ(source.find("#include"), std::string::npos) << "NVRTC kernels need no headers";
}

// The element body is CFamilyPrinter's: the CUDA printer writes the C printer's lets and stores.
TEST(CUDAPrinterTest, ElementStatementsMatchTheCPrinter) {
  NodeEntry x = Var("x"), b = Var("b");
  NodeEntry t = Apply("tanh", "t", {Apply("add", "s", {x, b})});
  NodeEntry out = Apply("maximum", "mx", {Apply("log1p", "l", {Apply("abs", "ab", {t})}), Apply("negative", "n", {x})});
  NodeEntry red = Apply("sum", "red", {Apply("multiply_scalar", "ms", {out}, {{"scalar", "0.1"}})}, {{"axis", "1"}});
  Graph graph = test::InferFromFeeds({red}, Feeds({{"x", Shape{5, 9}}, {"b", Shape{9}}}));
  graph.SetAttr("fusion.fmax", 8);
  Graph fused = ApplyPasses(graph, {"Fusion"});
  const IndexedGraph& idx = fused.indexed_graph();
  const auto& shapes = fused.GetAttr<ShapeVector>("shape");
  const auto& dtypes = fused.GetAttr<DTypeVector>("dtype");
  int checked = 0;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable() || node->op()->name != "_fused") continue;
    std::vector<Shape> in_shapes;
    std::vector<DType> in_types;
    for (const auto& e : idx[nid].inputs) {
      in_shapes.push_back(shapes[idx.entry_id(e)]);
      in_types.push_back(dtypes[idx.entry_id(e)]);
    }
    Kernel kernel = codegen::BuildKernel(GetFusedGroup(node->attrs), in_shapes, in_types);
    std::string c = KernelPrinter::Get("cpu").Print({kernel}), cuda = KernelPrinter::Get("cuda").Print({kernel});
    static const std::regex statement(R"(^\s*((const \S+ t\d+ = |\w+\[).*;)$)");
    std::istringstream lines(c);
    for (std::string line; std::getline(lines, line);) {
      std::smatch match;
      if (!std::regex_match(line, match, statement) || line.find("acc") != std::string::npos) continue;
      std::string expected = std::regex_replace(match[1].str(), std::regex("int64_t"), "long");
      EXPECT_NE(cuda.find(expected), std::string::npos) << "C statement '" << expected << "' not in\n" << cuda;
      ++checked;
    }
  }
  EXPECT_GE(checked, 8);
}

TEST(CUDAPrinterTest, LaunchesTravelWithThePTX) {
  NodeEntry x = Var("x"), b = Var("b");
  NodeEntry map = Apply("add", "map", {x, b});
  NodeEntry rows = Apply("sum", "rows", {Apply("exp", "e", {x})}, {{"axis", "1"}});
  Graph graph = test::InferFromFeeds({map, rows}, Feeds({{"x", Shape{3, 1000}}, {"b", Shape{1000}}}));
  std::set<std::pair<int64_t, int64_t>> shapes;
  for (const auto& kv : CompiledLaunches(test::FusedCUDASource(graph))) {
    shapes.insert({kv.second.groups, kv.second.group_size});
  }
  // The map walks 3000 elements with 256-thread blocks; the reduction gives each of 3 rows a block.
  EXPECT_EQ(shapes, (std::set<std::pair<int64_t, int64_t>>{{12, 256}, {3, 256}}));
}

TEST(CUDAPrinterTest, LiteralsKeepFullPrecisionAndSpecialValues) {
  NodeEntry x = Var("x");
  NodeEntry out =
      Apply("multiply_scalar", "out", {Apply("add_scalar", "a", {x}, {{"scalar", "0.1"}})}, {{"scalar", "1e-30"}});
  NodeEntry mx = Apply("max", "mx", {x});
  std::string source = test::FusedCUDASource(test::InferFromFeeds({out, mx}, Feeds({{"x", Shape{7}}})));
  EXPECT_NE(source.find("0.100000001f"), std::string::npos) << source;
  EXPECT_NE(source.find("1e-30f"), std::string::npos) << source;  // %.9g round-trips every float
  EXPECT_NE(source.find("(-INFINITY)"), std::string::npos) << "max starts from -inf:\n" << source;
  EXPECT_NE(source.find("#define INFINITY __int_as_float(0x7f800000)"), std::string::npos) << source;
  test::ExpectCompilesAndAssembles(source, "literals");
}

TEST(CUDAPrinterTest, RowKernelsCompileAndAssemble) {
  // One block per row: every row computation is one kernel with a shared array per reduction.
  for (const row_graphs::RowGraph& g : row_graphs::AllRowGraphs(9, 700)) {
    SCOPED_TRACE(g.name);
    std::map<std::string, NDArray> feeds(g.feeds.begin(), g.feeds.end());
    Graph graph = test::InferFromFeeds(g.fetches, feeds);
    std::string source = test::FusedCUDASource(graph);
    EXPECT_EQ(KernelNames(source).size(), 1u) << source;
    EXPECT_NE(source.find("__shared__ float partial_float32["), std::string::npos) << source;
    ExpectFusedKernelsBuild(graph);
  }
}

}  // namespace
}  // namespace ir
