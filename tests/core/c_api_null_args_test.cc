// Every C function, called with NULL in each pointer position, fails cleanly and names the
// argument (or succeeds where NULL is documented as allowed). A table lists one valid call
// per function; a test checks that the table covers every function declared in c_api.h.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/test_ops.h"
#include "ir/c_api.h"

namespace {

#define ASSERT_OK(call) ASSERT_EQ((call), 0) << IRGetLastError()

/*! \brief Supplies the pointer arguments of one call, replacing the one named `null_arg` by NULL. */
class Args {
 public:
  explicit Args(std::string null_arg) : null_arg_(std::move(null_arg)) {}
  template <typename T>
  T* operator()(const std::string& name, T* valid) {
    names_.push_back(name);
    return name == null_arg_ ? nullptr : valid;
  }
  bool IsNull(const std::string& name) const { return name == null_arg_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::string null_arg_;
  std::vector<std::string> names_;
};

/*! \brief A host callback with nothing to do (IRHostCallbackRegister's valid call). */
int NoOpHostCallback(uint32_t, IRNDArrayHandle*, uint32_t, IRNDArrayHandle*, char*, size_t) { return 0; }
int NoOpHostCallbackEx(void*, uint32_t, IRNDArrayHandle*, uint32_t, IRNDArrayHandle*, char*, size_t) { return 0; }

/*! \brief One C function: a valid call whose pointer arguments go through Args. */
struct Call {
  Call(std::string name, std::function<int(Args&)> valid_call, std::set<std::string> nullable = {})
      : function(std::move(name)), call(std::move(valid_call)), optional(std::move(nullable)) {}
  std::string function;
  std::function<int(Args&)> call;
  /*! \brief Arguments documented as accepting NULL: the call still succeeds. */
  std::set<std::string> optional;
};

class CApiNullArgsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(IRGetOpHandle("exp", &exp_op_));
    ASSERT_OK(IRSymbolCreateVariable("x", &x_));
    y_ = Exp(x_);
    ASSERT_OK(IRGraphCreate(y_, &graph_));
    // Fusion off: a run with only targets (fetches NULL) must not depend on the fusion pass.
    ASSERT_OK(IRSessionCreate("{\"fusion\": false}", &session_));
    int64_t shape[] = {2};
    float values[] = {1, 2};
    ASSERT_OK(IRNDArrayCreate(shape, 1, 0, values, &array_));
    ASSERT_OK(IRLazyFromNDArray(array_, &lazy_));
    ASSERT_OK(IRLazyTapeCreate(0, &tape_));
    RunOnce();
  }
  void TearDown() override {
    IRSymbolFree(x_);
    IRSymbolFree(y_);
    IRGraphFree(graph_);
    IRSessionFree(session_);
    IRNDArrayFree(array_);
    IRLazyFree(lazy_);
    IRLazyTapeFree(tape_);
  }

  IRSymbolHandle Exp(IRSymbolHandle input) {
    IRSymbolHandle out = nullptr;
    EXPECT_EQ(IRSymbolCreateAtomicSymbol(exp_op_, 0, nullptr, nullptr, &out), 0) << IRGetLastError();
    EXPECT_EQ(IRSymbolCompose(out, "y", 1, nullptr, &input), 0) << IRGetLastError();
    return out;
  }

  void RunOnce() {
    const char* names[] = {"x"};
    uint32_t n = 0;
    IRNDArrayHandle* outs = nullptr;
    ASSERT_OK(IRSessionRun(session_, y_, nullptr, 1, names, &array_, &n, &outs));
    for (uint32_t i = 0; i < n; ++i) IRNDArrayFree(outs[i]);
  }

  std::vector<Call> Table();

  IROpHandle exp_op_ = nullptr;
  IRSymbolHandle x_ = nullptr, y_ = nullptr;
  IRGraphHandle graph_ = nullptr;
  IRSessionHandle session_ = nullptr;
  IRNDArrayHandle array_ = nullptr;
  IRLazyHandle lazy_ = nullptr;
  IRLazyTapeHandle tape_ = nullptr;
};

// Out-parameters written by the calls below; their values are not checked here.
uint32_t u32;
int i32;
const char* str;
const char** strs;
const int64_t* dims;
IROpHandle op_out;
/*! \brief NULL: the current lazy Context (every IRLazyContext* call but Create accepts it). */
IRLazyContextHandle lazy_context = nullptr;

std::vector<Call> CApiNullArgsTest::Table() {
  auto free_symbol = [](IRSymbolHandle h) { IRSymbolFree(h); };
  return {
      {"IRListAllOpNames", [](Args& a) { return IRListAllOpNames(a("out_size", &u32), a("out_names", &strs)); }},
      {"IRGetOpHandle", [](Args& a) { return IRGetOpHandle(a("name", "exp"), a("out", &op_out)); }},
      {"IRGetOpInfo",
       [&](Args& a) {
         const char **types, **descs;
         return IRGetOpInfo(a("op", exp_op_), a("name", &str), a("description", &str), a("num_args", &u32),
                            a("arg_names", &strs), a("arg_types", &types), a("arg_descriptions", &descs));
       }},
      {"IRGetOpAttrKeys",
       [&](Args& a) { return IRGetOpAttrKeys(a("op", exp_op_), a("out_size", &u32), a("out_keys", &strs)); }},
      {"IRSymbolCreateVariable",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRSymbolCreateVariable(a("name", "v"), a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRSymbolCreateAtomicSymbol",
       [&](Args& a) {
         IROpHandle split = nullptr;
         EXPECT_EQ(IRGetOpHandle("core_test_split", &split), 0);
         IRSymbolHandle out = nullptr;
         const char* keys[] = {"num_outputs"};
         const char* vals[] = {"2"};
         int rc = IRSymbolCreateAtomicSymbol(a("op", split), 1, a("keys", keys), a("vals", vals), a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRSymbolCompose",
       [&](Args& a) {
         IRSymbolHandle sym = nullptr;
         EXPECT_EQ(IRSymbolCreateAtomicSymbol(exp_op_, 0, nullptr, nullptr, &sym), 0);
         const char* keys[] = {"x"};
         int rc = IRSymbolCompose(a("sym", sym), a("name", "e"), 1, a("keys", keys), a("args", &x_));
         free_symbol(sym);
         return rc;
       },
       {"name", "keys"}},
      {"IRSymbolCreateGroup",
       [&](Args& a) {
         IRSymbolHandle out = nullptr, parts[] = {x_, y_};
         int rc = IRSymbolCreateGroup(2, a("symbols", parts), a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRSymbolCreateControlFlow",
       [&](Args& a) {
         IRSymbolHandle p0 = nullptr, p1 = nullptr, out = nullptr;
         EXPECT_EQ(IRSymbolCreateVariable("then/p", &p0), 0);
         EXPECT_EQ(IRSymbolCreateVariable("else/p", &p1), 0);
         IRSymbolHandle inputs[] = {x_, y_}, params[] = {p0, p1}, outputs[] = {p0, p1};
         const uint32_t num_params[] = {1, 1};
         int rc = IRSymbolCreateControlFlow(a("op_name", "cond"), a("node_name", "c"), 0, nullptr, nullptr, 2,
                                            a("inputs", inputs), 2, a("num_params", num_params), a("params", params),
                                            a("body_outputs", outputs), a("out", &out));
         free_symbol(out);
         free_symbol(p0);
         free_symbol(p1);
         return rc;
       }},
      {"IRSymbolCreatePfor",
       [&](Args& a) {
         IRSymbolHandle index = nullptr, out = nullptr;
         EXPECT_EQ(IRSymbolCreateVariable("pfor/i", &index), 0);
         const char* keys[] = {"n"};
         const char* vals[] = {"2"};
         int rc = IRSymbolCreatePfor(a("node_name", "p"), a("index", index), a("outputs", y_), nullptr, nullptr, 1,
                                     a("keys", keys), a("vals", vals), a("out", &out));
         free_symbol(out);
         free_symbol(index);
         return rc;
       }},
      {"IRSymbolCopy",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRSymbolCopy(a("sym", y_), a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRSymbolFree",
       [&](Args& a) {
         IRSymbolHandle sym = nullptr;
         EXPECT_EQ(IRSymbolCopy(y_, &sym), 0);
         int rc = IRSymbolFree(a("sym", sym));
         if (a.IsNull("sym")) free_symbol(sym);
         return rc;
       },
       {"sym"}},
      {"IRSymbolGetNumOutputs", [&](Args& a) { return IRSymbolGetNumOutputs(a("sym", y_), a("out", &u32)); }},
      {"IRSymbolGetOutput",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRSymbolGetOutput(a("sym", y_), 0, a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRSymbolGetInternals",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRSymbolGetInternals(a("sym", y_), a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRSymbolListInputNames",
       [&](Args& a) { return IRSymbolListInputNames(a("sym", y_), 0, a("out_size", &u32), a("out_names", &strs)); }},
      {"IRSymbolListOutputNames",
       [&](Args& a) { return IRSymbolListOutputNames(a("sym", y_), a("out_size", &u32), a("out_names", &strs)); }},
      {"IRSymbolAddControlDeps",
       [&](Args& a) {
         IRSymbolHandle sym = Exp(x_);
         int rc = IRSymbolAddControlDeps(a("sym", sym), a("deps", x_));
         free_symbol(sym);
         return rc;
       }},
      {"IRSymbolSetAttrs",
       [&](Args& a) {
         IRSymbolHandle sym = Exp(x_);
         const char* keys[] = {"__note__"};
         const char* vals[] = {"v"};
         int rc = IRSymbolSetAttrs(a("sym", sym), 1, a("keys", keys), a("vals", vals));
         free_symbol(sym);
         return rc;
       }},
      {"IRSymbolGetAttr",
       [&](Args& a) { return IRSymbolGetAttr(a("sym", y_), a("key", "note"), a("out", &str), a("success", &i32)); }},
      {"IRSymbolPrint", [&](Args& a) { return IRSymbolPrint(a("sym", y_), a("out", &str)); }},
      {"IRGraphCreate",
       [&](Args& a) {
         IRGraphHandle out = nullptr;
         int rc = IRGraphCreate(a("sym", y_), a("out", &out));
         IRGraphFree(out);
         return rc;
       }},
      {"IRGraphFree",
       [&](Args& a) {
         IRGraphHandle graph = nullptr;
         EXPECT_EQ(IRGraphCreate(y_, &graph), 0);
         int rc = IRGraphFree(a("graph", graph));
         if (a.IsNull("graph")) IRGraphFree(graph);
         return rc;
       },
       {"graph"}},
      {"IRGraphGetSymbol",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRGraphGetSymbol(a("graph", graph_), a("out", &out));
         free_symbol(out);
         return rc;
       }},
      {"IRGraphApplyPasses",
       [&](Args& a) {
         IRGraphHandle out = nullptr;
         const char* passes[] = {"InferShape"};
         int rc = IRGraphApplyPasses(a("src", graph_), 1, a("pass_names", passes), a("dst", &out));
         IRGraphFree(out);
         return rc;
       }},
      {"IRListPasses", [](Args& a) { return IRListPasses(a("out_size", &u32), a("out_names", &strs)); }},
      {"IRPipelineList", [](Args& a) { return IRPipelineList(a("out_size", &u32), a("out_names", &strs)); }},
      {"IRPipelineGet", [](Args& a) { return IRPipelineGet(a("name", "infer"), a("out_text", &str)); }},
      {"IRPipelinePasses",
       [](Args& a) {
         const char* on[] = {"simplify"};
         return IRPipelinePasses(a("name", "session"), 1, a("on_options", on), a("out_size", &u32),
                                 a("out_names", &strs));
       }},
      {"IRGraphSaveJSON", [&](Args& a) { return IRGraphSaveJSON(a("graph", graph_), a("out_json", &str)); }},
      {"IRGraphLoadJSON",
       [&](Args& a) {
         const char* json = nullptr;
         EXPECT_EQ(IRGraphSaveJSON(graph_, &json), 0);
         std::string copy = json;
         IRGraphHandle out = nullptr;
         int rc = IRGraphLoadJSON(a("json", copy.c_str()), a("out", &out));
         IRGraphFree(out);
         return rc;
       }},
      {"IRGraphGetAttrJSON",
       [&](Args& a) {
         return IRGraphGetAttrJSON(a("graph", graph_), a("key", "k"), a("out_json", &str), a("success", &i32));
       }},
      {"IRGraphSetAttrJSON",
       [&](Args& a) { return IRGraphSetAttrJSON(a("graph", graph_), a("key", "k"), a("json", "[\"int\", 1]")); }},
      {"IRGraphSetAttrBytes",
       [&](Args& a) {
         const char bytes[] = {'a', '\0', 'b'};
         return IRGraphSetAttrBytes(a("graph", graph_), a("key", "k"), a("data", bytes), sizeof(bytes));
       }},
      {"IRGraphListAttrs",
       [&](Args& a) { return IRGraphListAttrs(a("graph", graph_), a("out_size", &u32), a("out_keys", &strs)); }},
      {"IRGraphPrint", [&](Args& a) { return IRGraphPrint(a("graph", graph_), 0, a("out", &str)); }},
      {"IRLoadOpLibrary", [](Args& a) { return IRLoadOpLibrary(a("path", IR_TEST_LIB_DIR "/libexample_ops.so")); }},
      {"IRRulesLoadFile",
       [](Args& a) {
         // A rule file without rules: registering it must not change what other tests' graphs become.
         std::string path = ::testing::TempDir() + "c_api_null_args.rules";
         std::ofstream(path) << "# no rules\n";
         return IRRulesLoadFile(a("path", path.c_str()), a("out_set", &str));
       }},
      {"IRHostCallbackRegister",
       [](Args& a) {
         int64_t id = 0;
         return IRHostCallbackRegister(a("fn", &NoOpHostCallback), a("out_id", &id));
       }},
      {"IRHostCallbackRegisterEx",
       [](Args& a) {
         int64_t id = 0;
         return IRHostCallbackRegisterEx(a("fn", &NoOpHostCallbackEx), nullptr, a("out_id", &id));
       }},
      {"IRSymbolGradient",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRSymbolGradient(a("ys", y_), a("xs", x_), a("grad_ys", y_), a("out", &out));
         free_symbol(out);
         return rc;
       },
       {"grad_ys"}},
      {"IRSymbolGradientEx",
       [&](Args& a) {
         IRSymbolHandle out = nullptr;
         int rc = IRSymbolGradientEx(a("ys", y_), a("xs", x_), a("grad_ys", y_),
                                     a("options_json", "{\"stop_nodes\": []}"), a("out", &out));
         free_symbol(out);
         return rc;
       },
       {"grad_ys", "options_json"}},
      {"IRNDArrayCreate",
       [](Args& a) {
         int64_t shape[] = {2, 1};
         float data[] = {1, 2};
         IRNDArrayHandle out = nullptr;
         int rc = IRNDArrayCreate(a("shape", shape), 2, 0, a("data_or_null", data), a("out", &out));
         IRNDArrayFree(out);
         return rc;
       },
       {"data_or_null"}},
      {"IRNDArrayGetShape",
       [&](Args& a) { return IRNDArrayGetShape(a("array", array_), a("ndim", &i32), a("shape", &dims)); }},
      {"IRNDArrayGetDType", [&](Args& a) { return IRNDArrayGetDType(a("array", array_), a("dtype", &i32)); }},
      {"IRNDArrayGetData",
       [&](Args& a) {
         const void* data = nullptr;
         return IRNDArrayGetData(a("array", array_), a("ndim", &i32), a("shape", &dims), a("dtype", &i32),
                                 a("data", &data));
       }},
      {"IRNDArraySyncCopyToCPU",
       [&](Args& a) {
         float dst[2];
         return IRNDArraySyncCopyToCPU(a("array", array_), a("dst", dst), sizeof(dst));
       }},
      {"IRNDArrayFree",
       [](Args& a) {
         IRNDArrayHandle array = nullptr;
         EXPECT_EQ(IRNDArrayCreate(nullptr, 0, 0, nullptr, &array), 0);
         int rc = IRNDArrayFree(a("array", array));
         if (a.IsNull("array")) IRNDArrayFree(array);
         return rc;
       },
       {"array"}},
      {"IRSessionCreate",
       [](Args& a) {
         IRSessionHandle out = nullptr;
         int rc = IRSessionCreate(a("options_json", "{\"fusion\": false}"), a("out", &out));
         IRSessionFree(out);
         return rc;
       },
       {"options_json"}},
      {"IRSessionRun",
       [&](Args& a) {
         const char* names[] = {"x"};
         uint32_t n = 0;
         IRNDArrayHandle* outs = nullptr;
         int rc = IRSessionRun(a("session", session_), a("fetches", y_), a("targets", y_), 1, a("feed_names", names),
                               a("feed_values", &array_), a("num_outputs", &n), a("outputs", &outs));
         for (uint32_t i = 0; rc == 0 && i < n; ++i) IRNDArrayFree(outs[i]);
         return rc;
       },
       {"fetches", "targets"}},
      {"IRSessionRunBorrowed",
       [&](Args& a) {
         const char* names[] = {"x"};
         int dtypes[] = {0}, ndims[] = {1};
         int64_t shapes[] = {2};
         float values[] = {1, 2};
         void* data[] = {values};
         uint32_t n = 0;
         IRNDArrayHandle* outs = nullptr;
         int rc =
             IRSessionRunBorrowed(a("session", session_), a("fetches", y_), a("targets", y_), 1, a("feed_names", names),
                                  a("feed_dtypes", dtypes), a("feed_ndims", ndims), a("feed_shapes", shapes),
                                  a("feed_data", data), a("num_outputs", &n), a("outputs", &outs));
         for (uint32_t i = 0; rc == 0 && i < n; ++i) IRNDArrayFree(outs[i]);
         return rc;
       },
       {"fetches", "targets"}},
      {"IRSessionGetVariable",
       [&](Args& a) {
         IRNDArrayHandle out = nullptr;
         int rc = IRSessionGetVariable(a("session", session_), a("name", "w"), a("out", &out), a("found", &i32));
         IRNDArrayFree(out);
         return rc;
       }},
      {"IRSessionSetVariable",
       [&](Args& a) { return IRSessionSetVariable(a("session", session_), a("name", "w"), a("value", array_)); }},
      {"IRSessionListVariables",
       [&](Args& a) {
         return IRSessionListVariables(a("session", session_), a("out_size", &u32), a("out_names", &strs));
       }},
      {"IRSessionGetStatsJSON",
       [&](Args& a) { return IRSessionGetStatsJSON(a("session", session_), a("json", &str)); }},
      {"IRSessionGetLastGraph",
       [&](Args& a) {
         IRGraphHandle out = nullptr;
         int rc = IRSessionGetLastGraph(a("session", session_), a("out", &out));
         IRGraphFree(out);
         return rc;
       }},
      {"IRSessionFree",
       [](Args& a) {
         IRSessionHandle session = nullptr;
         EXPECT_EQ(IRSessionCreate(nullptr, &session), 0);
         int rc = IRSessionFree(a("session", session));
         if (a.IsNull("session")) IRSessionFree(session);
         return rc;
       },
       {"session"}},
      {"IRLazyContextCreate",
       [](Args& a) {
         IRLazyContextHandle out = nullptr;
         int rc = IRLazyContextCreate(a("options_json", "{\"fusion\": false}"), a("out", &out));
         IRLazyContextFree(out);
         return rc;
       },
       {"options_json"}},
      {"IRLazyContextFree",
       [](Args& a) {
         IRLazyContextHandle context = nullptr;
         EXPECT_EQ(IRLazyContextCreate(nullptr, &context), 0);
         int rc = IRLazyContextFree(a("context", context));
         if (a.IsNull("context")) IRLazyContextFree(context);
         return rc;
       },
       {"context"}},
      {"IRLazyContextSetCurrent",
       [](Args& a) {
         IRLazyContextHandle context = nullptr;
         EXPECT_EQ(IRLazyContextCreate(nullptr, &context), 0);
         int rc = IRLazyContextSetCurrent(a("context", context));
         IRLazyContextSetCurrent(nullptr);
         IRLazyContextFree(context);
         return rc;
       },
       {"context"}},
      {"IRLazyContextGetStatsJSON",
       [](Args& a) { return IRLazyContextGetStatsJSON(a("context", lazy_context), a("json", &str)); },
       {"context"}},
      {"IRLazyContextResetStats",
       [](Args& a) { return IRLazyContextResetStats(a("context", lazy_context)); },
       {"context"}},
      {"IRLazyFromNDArray",
       [&](Args& a) {
         IRLazyHandle out = nullptr;
         int rc = IRLazyFromNDArray(a("value", array_), a("out", &out));
         IRLazyFree(out);
         return rc;
       }},
      {"IRLazyFromHost",
       [](Args& a) {
         int64_t shape[] = {2};
         float values[] = {1, 2};
         IRLazyHandle out = nullptr;
         int rc = IRLazyFromHost(a("data", values), 1, a("shape", shape), 0, a("out", &out));
         IRLazyFree(out);
         return rc;
       }},
      {"IRLazyScalar",
       [](Args& a) {
         IRLazyHandle out = nullptr;
         int rc = IRLazyScalar(1.5, 0, a("out", &out));
         IRLazyFree(out);
         return rc;
       }},
      {"IRLazyApply",
       [&](Args& a) {
         IROpHandle split = nullptr;
         EXPECT_EQ(IRGetOpHandle("split", &split), 0);
         const char* keys[] = {"num_outputs"};
         const char* vals[] = {"2"};
         uint32_t n = 0;
         IRLazyHandle* outs = nullptr;
         int rc = IRLazyApply(a("op", split), 1, a("keys", keys), a("vals", vals), 1, a("inputs", &lazy_),
                              a("num_outputs", &n), a("outputs", &outs));
         for (uint32_t i = 0; rc == 0 && i < n; ++i) IRLazyFree(outs[i]);
         return rc;
       }},
      {"IRLazyCopy",
       [&](Args& a) {
         IRLazyHandle out = nullptr;
         int rc = IRLazyCopy(a("array", lazy_), a("out", &out));
         IRLazyFree(out);
         return rc;
       }},
      {"IRLazyFree",
       [&](Args& a) {
         IRLazyHandle copy = nullptr;
         EXPECT_EQ(IRLazyCopy(lazy_, &copy), 0);
         int rc = IRLazyFree(a("array", copy));
         if (a.IsNull("array")) IRLazyFree(copy);
         return rc;
       },
       {"array"}},
      {"IRLazyIsPending", [&](Args& a) { return IRLazyIsPending(a("array", lazy_), a("out", &i32)); }},
      {"IRLazyGetShape",
       [&](Args& a) { return IRLazyGetShape(a("array", lazy_), a("ndim", &i32), a("shape", &dims)); }},
      {"IRLazyGetDType", [&](Args& a) { return IRLazyGetDType(a("array", lazy_), a("dtype", &i32)); }},
      {"IRLazyMaterialize", [&](Args& a) { return IRLazyMaterialize(1, a("arrays", &lazy_)); }},
      {"IRLazyToNDArray",
       [&](Args& a) {
         IRNDArrayHandle out = nullptr;
         int rc = IRLazyToNDArray(a("array", lazy_), a("out", &out));
         IRNDArrayFree(out);
         return rc;
       }},
      {"IRLazyReadValue",
       [&](Args& a) {
         IRNDArrayHandle out = nullptr;
         int rc = IRLazyReadValue(a("array", lazy_), a("out", &out));
         IRNDArrayFree(out);
         return rc;
       }},
      {"IRLazyAssign", [&](Args& a) { return IRLazyAssign(1, a("targets", &lazy_), a("values", &lazy_)); }},
      {"IRLazyAssignUpdate",
       [&](Args& a) { return IRLazyAssignUpdate(1, a("targets", &lazy_), a("values", &lazy_), 1); }},
      {"IRLazyTapeCreate",
       [](Args& a) {
         IRLazyTapeHandle out = nullptr;
         int rc = IRLazyTapeCreate(0, a("out", &out));
         IRLazyTapeFree(out);
         return rc;
       }},
      {"IRLazyTapeWatch", [&](Args& a) { return IRLazyTapeWatch(a("tape", tape_), a("array", lazy_)); }},
      {"IRLazyTapeStop", [&](Args& a) { return IRLazyTapeStop(a("tape", tape_)); }},
      {"IRLazyTapeGradient",
       [&](Args& a) {
         IRLazyTapeHandle tape = nullptr;
         EXPECT_EQ(IRLazyTapeCreate(1, &tape), 0);
         EXPECT_EQ(IRLazyTapeWatch(tape, lazy_), 0);
         IRLazyHandle grad = nullptr;
         int rc = IRLazyTapeGradient(a("tape", tape), 1, a("targets", &lazy_), a("heads", &lazy_), 1,
                                     a("sources", &lazy_), a("out_grads", &grad));
         IRLazyFree(grad);
         IRLazyTapeFree(tape);
         return rc;
       },
       {"heads"}},
      {"IRCollectiveInit",
       [](Args& a) { return IRCollectiveInit(a("options_json", "{\"transport\": \"local\"}")); },
       {"options_json"}},
      {"IRCollectiveShutdown",
       [](Args&) {
         EXPECT_EQ(IRCollectiveInit("{\"transport\": \"local\"}"), 0) << IRGetLastError();
         return IRCollectiveShutdown();
       }},
      {"IRCollectiveIsInitialized",
       [](Args& a) {
         int out = 0;
         return IRCollectiveIsInitialized(a("out", &out));
       }},
      {"IRCollectiveGetInfo",
       [](Args& a) {
         EXPECT_EQ(IRCollectiveInit("{\"transport\": \"local\"}"), 0) << IRGetLastError();
         int rank = -1, size = -1, local_rank = -1, local_size = -1;
         const char* transport = nullptr;
         return IRCollectiveGetInfo(a("rank", &rank), a("size", &size), a("local_rank", &local_rank),
                                    a("local_size", &local_size), a("transport", &transport));
       },
       {"rank", "size", "local_rank", "local_size", "transport"}},
      {"IRCollectiveAllreduce",
       [&](Args& a) {
         EXPECT_EQ(IRCollectiveInit("{\"transport\": \"local\"}"), 0) << IRGetLastError();
         IRNDArrayHandle out = nullptr;
         int rc = IRCollectiveAllreduce(a("name", "t"), a("value", array_), 1, a("out", &out));
         IRNDArrayFree(out);
         return rc;
       }},
      {"IRCollectiveAllgather",
       [&](Args& a) {
         EXPECT_EQ(IRCollectiveInit("{\"transport\": \"local\"}"), 0) << IRGetLastError();
         IRNDArrayHandle out = nullptr;
         int rc = IRCollectiveAllgather(a("name", "t"), a("value", array_), a("out", &out));
         IRNDArrayFree(out);
         return rc;
       }},
      {"IRCollectiveBroadcast",
       [&](Args& a) {
         EXPECT_EQ(IRCollectiveInit("{\"transport\": \"local\"}"), 0) << IRGetLastError();
         IRNDArrayHandle out = nullptr;
         int rc = IRCollectiveBroadcast(a("name", "t"), a("value", array_), 0, a("out", &out));
         IRNDArrayFree(out);
         return rc;
       }},
      {"IRCollectiveGetStatsJSON",
       [&](Args& a) {
         EXPECT_EQ(IRCollectiveInit("{\"transport\": \"local\"}"), 0) << IRGetLastError();
         return IRCollectiveGetStatsJSON(0, a("json", &str));
       }},
      {"IRLazyTapeFree",
       [](Args& a) {
         IRLazyTapeHandle tape = nullptr;
         EXPECT_EQ(IRLazyTapeCreate(0, &tape), 0);
         int rc = IRLazyTapeFree(a("tape", tape));
         if (a.IsNull("tape")) IRLazyTapeFree(tape);
         return rc;
       },
       {"tape"}},
  };
}

TEST_F(CApiNullArgsTest, EveryPointerArgumentIsCheckedForNull) {
  for (const Call& entry : Table()) {
    SCOPED_TRACE(entry.function);
    Args valid("");
    ASSERT_EQ(entry.call(valid), 0) << IRGetLastError();
    for (const std::string& arg : valid.names()) {
      SCOPED_TRACE(arg);
      Args with_null(arg);
      int rc = entry.call(with_null);
      if (entry.optional.count(arg)) {
        EXPECT_EQ(rc, 0) << IRGetLastError();
        continue;
      }
      EXPECT_EQ(rc, -1);
      std::string expected = entry.function + ": argument '" + arg + "' is NULL";
      EXPECT_NE(std::string(IRGetLastError()).find(expected), std::string::npos)
          << "expected '" << expected << "', got '" << IRGetLastError() << "'";
    }
  }
}

TEST_F(CApiNullArgsTest, TableCoversEveryFunctionOfTheHeader) {
  std::ifstream header(IR_TEST_SOURCE_DIR "/include/ir/c_api.h");
  std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  std::set<std::string> covered;
  for (const Call& entry : Table()) covered.insert(entry.function);
  std::regex declaration(R"(IR_DLL\s+[\w\s\*]+?\b(IR\w+)\s*\()");
  int functions = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), declaration), end; it != end; ++it) {
    std::string name = (*it)[1];
    if (name == "IRGetLastError") continue;
    ++functions;
    EXPECT_TRUE(covered.count(name)) << name << " is missing from the NULL-argument table";
  }
  EXPECT_GE(functions, 45);
}

TEST_F(CApiNullArgsTest, NullElementsOfArraysAreNamed) {
  IRSymbolHandle out = nullptr;
  IRSymbolHandle parts[] = {x_, nullptr};
  EXPECT_EQ(IRSymbolCreateGroup(2, parts, &out), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("IRSymbolCreateGroup: argument 'symbols[1]' is NULL"), std::string::npos)
      << IRGetLastError();
  const char* names[] = {nullptr};
  uint32_t n = 0;
  IRNDArrayHandle* outs = nullptr;
  EXPECT_EQ(IRSessionRun(session_, y_, nullptr, 1, names, &array_, &n, &outs), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("IRSessionRun: argument 'feed_names[0]' is NULL"), std::string::npos)
      << IRGetLastError();
  EXPECT_EQ(IRSessionRun(session_, y_, nullptr, 1, names, nullptr, &n, &outs), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("is NULL"), std::string::npos) << IRGetLastError();
}

}  // namespace
