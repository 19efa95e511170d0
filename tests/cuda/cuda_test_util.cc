/*!
 * \file cuda_test_util.cc
 * \brief NVRTC + ptxas checks and graph building for the CUDA tests.
 */
#include "cuda_test_util.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "ir/autodiff.h"
#include "ir/codegen.h"
#include "ir/pass.h"
#include "ops/op_harness.h"
#include "runtime/cuda/cuda_target.h"

namespace ir {
namespace test {

std::string CompileCUDA(const std::string& source) { return cuda::CompileToPTX(source); }

std::string PtxasErrors(const std::string& ptx) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/ir-ptxas-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) return "cannot create a temporary file for ptxas";
  close(fd);
  std::string path = name.data();
  {
    std::ofstream out(path);
    out << ptx;
  }
  std::string command = StrCat(IR_TEST_PTXAS, " -arch=sm_90 ", path, " -o ", path, ".cubin 2>&1");
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "cannot run " + command;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
  int status = pclose(pipe);
  std::remove(path.c_str());
  std::remove((path + ".cubin").c_str());
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return ok ? "" : StrCat("ptxas failed (", command, "):\n", output.empty() ? "(no output)" : output);
}

void ExpectCompilesAndAssembles(const std::string& source, const std::string& what) {
  std::string ptx;
  try {
    ptx = CompileCUDA(source);
  } catch (const Error& err) {
    ADD_FAILURE() << what << ": " << err.what();
    return;
  }
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << what << ": PTX not for compute_90";
  std::string errors = PtxasErrors(ptx);
  EXPECT_EQ(errors, "") << what << "\n--- source ---\n" << source;
}

std::string FusedCUDASource(Graph graph, int fmax) {
  graph.SetAttr("fusion.fmax", fmax);
  graph.SetAttr("target", std::string("cuda"));
  Graph compiled = ApplyPasses(graph, {"Fusion", "CodeGen"});
  for (const std::string& line : compiled.GetAttr<std::vector<std::string>>("codegen_log")) {
    ADD_FAILURE() << "CodeGen left a fused node unfused: " << line;
  }
  return compiled.GetAttr<std::string>("kernel_source");
}

LeNet BuildLeNet(int64_t batch, int64_t image, int64_t c1, int64_t c2, int64_t hidden) {
  LeNet net;
  int64_t flat = (image / 4) * (image / 4) * c2;
  std::map<std::string, Shape> params = {
      {"w1", Shape{5, 5, 1, c1}},  {"b1", Shape{c1}},     {"w2", Shape{5, 5, c1, c2}}, {"b2", Shape{c2}},
      {"w3", Shape{flat, hidden}}, {"b3", Shape{hidden}}, {"w4", Shape{hidden, 10}},   {"b4", Shape{10}}};
  std::map<std::string, NodeEntry> p;
  uint64_t seed = 1;
  for (const auto& kv : params) {
    p[kv.first] = Var(kv.first);
    net.variables.push_back(kv.first);
    net.feeds[kv.first] = RandomArray(kv.second, DType::kFloat32, seed++, -0.1, 0.1);
  }
  NodeEntry x = Var("x"), labels = Var("labels");
  net.feeds["x"] = RandomArray(Shape{batch, image, image, 1}, DType::kFloat32, seed++);
  net.feeds["labels"] = NDArray(Shape{batch}, DType::kInt32);
  for (int64_t i = 0; i < batch; ++i) net.feeds["labels"].data<int32_t>()[i] = static_cast<int32_t>(i % 10);
  auto conv_block = [&](const std::string& tag, NodeEntry in, const std::string& w, const std::string& b) {
    NodeEntry conv = Apply("conv2d", tag + "_conv", {in, p[w]}, {{"padding", "SAME"}});
    NodeEntry act = Apply("relu", tag + "_relu", {Apply("bias_add", tag + "_bias", {conv, p[b]})});
    return Apply("max_pool2d", tag + "_pool", {act}, {{"ksize", "2"}, {"strides", "2"}, {"padding", "SAME"}});
  };
  NodeEntry h = conv_block("c2", conv_block("c1", x, "w1", "b1"), "w2", "b2");
  h = Apply("reshape", "flat", {h}, {{"shape", StrCat("(-1, ", flat, ")")}});
  h = Apply("relu", "fc3_relu", {Apply("bias_add", "fc3_bias", {Apply("matmul", "fc3", {h, p["w3"]}), p["b3"]})});
  NodeEntry logits = Apply("bias_add", "fc4_bias", {Apply("matmul", "fc4", {h, p["w4"]}), p["b4"]});
  NodeEntry ce = Apply("sparse_softmax_cross_entropy_with_logits", "ce", {logits, labels});
  NodeEntry loss = Apply("mean", "loss", {ce});
  std::vector<NodeEntry> xs;
  for (const auto& kv : params) xs.push_back(p[kv.first]);
  std::vector<NodeEntry> grads = Gradients({loss}, xs);
  std::vector<NodeEntry> updates;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::string name = xs[i].node->attrs.name;
    NodeEntry step = Apply("multiply_scalar", name + "_step", {grads[i]}, {{"scalar", "0.01"}});
    updates.push_back(Apply("assign_sub", name + "_update", {xs[i], step}));
  }
  net.outputs = {loss, Apply("group", "train", updates)};
  return net;
}

}  // namespace test
}  // namespace ir
