#include <gtest/gtest.h>

#include "ops/op_common.h"
#include "test_util.h"

namespace ir {
namespace op {
namespace {

struct ListParam : public dmlc::Parameter<ListParam> {
  IntList axes;
  DMLC_DECLARE_PARAMETER(ListParam) { DMLC_DECLARE_FIELD(axes).set_default(IntList()).describe("Axes."); }
};
DMLC_REGISTER_PARAMETER(ListParam);

IntList Parse(const std::string& text) {
  ListParam p;
  p.Init(std::map<std::string, std::string>{{"axes", text}});
  return p.axes;
}

TEST(IntListTest, ParsesCommonSpellings) {
  EXPECT_EQ(Parse("(1,2)"), (IntList{1, 2}));
  EXPECT_EQ(Parse("[1, -2, 3]"), (IntList{1, -2, 3}));
  EXPECT_EQ(Parse("4"), (IntList{4}));
  EXPECT_EQ(Parse("()"), IntList());
  EXPECT_EQ(Parse(""), IntList());
  EXPECT_THROW(Parse("(1,x)"), dmlc::ParamError);
  std::ostringstream os;
  os << IntList{3, -1};
  EXPECT_EQ(os.str(), "(3,-1)");
}

TEST(BroadcastTest, ShapesFollowNumPyRules) {
  NodeAttrs attrs;
  attrs.name = "b";
  EXPECT_EQ(BroadcastShapes(attrs, Shape{3, 1, 5}, Shape{4, 5}), (Shape{3, 4, 5}));
  EXPECT_EQ(BroadcastShapes(attrs, Shape::Scalar(), Shape{2}), (Shape{2}));
  EXPECT_EQ(BroadcastShapes(attrs, Shape{kUnknownDim, 3}, Shape{1, 3}), (Shape{kUnknownDim, 3}));
  EXPECT_ERROR(BroadcastShapes(attrs, Shape{2, 3}, Shape{4, 3}), "cannot be broadcast together (dimension 0: 2 vs 4)");
  EXPECT_EQ(BroadcastStrides(Shape{3, 1}, Shape{2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
}

}  // namespace
}  // namespace op
}  // namespace ir
