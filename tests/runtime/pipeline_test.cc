#include <gtest/gtest.h>

#include <string>

#include "core/registration_transaction.h"
#include "ir/c_api.h"
#include "ir/pass.h"
#include "ir/pipeline.h"
#include "ir/runtime.h"
#include "test_util.h"

namespace ir {
namespace {

TEST(PipelineTest, SessionPipelinePrintsItsConditions) {
  std::string text = Pipeline("session").ToString();
  EXPECT_EQ(text.rfind("session: InferShape, InferType, Vectorize, Simplify [if simplify]", 0), 0u) << text;
  EXPECT_NE(text.find("Fusion [if fusion, if registered]"), std::string::npos) << text;
  std::vector<std::string> plain = Pipeline("session").Passes();
  std::vector<std::string> expected{"InferShape", "InferType", "Vectorize", "ScheduleCollectives", "PlanMemory"};
  EXPECT_EQ(plain, expected);
}

TEST(PipelineTest, UnknownNameListsTheRegisteredOnes) {
  try {
    Pipeline("no_such_pipeline");
    FAIL() << "expected an error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("unknown pipeline 'no_such_pipeline' (registered: "), std::string::npos);
    EXPECT_NE(std::string(err.what()).find("session"), std::string::npos);
  }
}

TEST(PipelineTest, RegisterAndInsert) {
  Pipeline::Register("pipeline_test", {{"InferShape"}, {"PlanMemory"}});
  Pipeline::InsertAfter("pipeline_test", "InferShape", {"InferType"});
  Pipeline::InsertBefore("pipeline_test", "PlanMemory", {"Simplify", "simplify"});
  EXPECT_EQ(Pipeline("pipeline_test").ToString(),
            "pipeline_test: InferShape, InferType, Simplify [if simplify], PlanMemory");
  std::vector<std::string> on = Pipeline("pipeline_test").Passes({{"simplify", true}});
  EXPECT_EQ(on.size(), 4u);
  EXPECT_THROW(Pipeline::Register("pipeline_test", {}), Error);
  EXPECT_THROW(Pipeline::InsertAfter("pipeline_test", "NoSuchPass", {"InferType"}), Error);
}

TEST(PipelineTest, ALoadingLibraryStagesItsChanges) {
  Pipeline::Register("pipeline_staged", {{"InferShape"}});
  {
    detail::RegistrationTransaction transaction;
    Pipeline::InsertAfter("pipeline_staged", "InferShape", {"InferType"});
    transaction.Deactivate();
    EXPECT_EQ(Pipeline("pipeline_staged").ToString(), "pipeline_staged: InferShape");
    EXPECT_TRUE(transaction.Finish().empty());
  }
  EXPECT_EQ(Pipeline("pipeline_staged").ToString(), "pipeline_staged: InferShape, InferType");
  {
    detail::RegistrationTransaction transaction;
    Pipeline::InsertAfter("pipeline_staged", "InferType", {"PlanMemory"});
    Pipeline::InsertAfter("pipeline_staged", "NoSuchPass", {"Simplify"});
    transaction.Deactivate();
    EXPECT_EQ(transaction.Finish().size(), 1u);
  }
  EXPECT_EQ(Pipeline("pipeline_staged").ToString(), "pipeline_staged: InferShape, InferType");
}

// A session binds its graphs with pipeline "session": a pass inserted into it runs.
TEST(PipelineTest, SessionsBindWithTheSessionPipeline) {
  static int runs = 0;
  IR_REGISTER_PASS(PipelineTestCountRuns).describe("counts its runs (pipeline_test)").set_body([](Graph g) {
    ++runs;
    return g;
  });
  Pipeline::InsertAfter("session", "InferType", {"PipelineTestCountRuns"});
  NodeEntry x{Node::CreateVariable("x"), 0};
  NodePtr exp = Node::Create();
  exp->attrs.op = Op::Get("exp");
  exp->attrs.name = "e";
  exp->inputs = {x};
  Session session;
  std::vector<NDArray> out = session.Run({NodeEntry{exp, 0}}, {{"x", NDArray::FromVector<float>(Shape{2}, {0, 0})}});
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{1, 1}));
}

TEST(PipelineTest, CApiPrintsAndLists) {
  const char* text = nullptr;
  ASSERT_EQ(IRPipelineGet("infer", &text), 0);
  EXPECT_STREQ(text, "infer: InferShape, InferType");
  EXPECT_NE(IRPipelineGet("no_such_pipeline", &text), 0);
  EXPECT_NE(std::string(IRGetLastError()).find("unknown pipeline 'no_such_pipeline'"), std::string::npos);
  uint32_t size = 0;
  const char** names = nullptr;
  ASSERT_EQ(IRPipelineList(&size, &names), 0);
  EXPECT_GE(size, 2u);
}

}  // namespace
}  // namespace ir
