/*!
 * \file hostile_input_test.cc
 * \brief Tiny crafted inputs that claim huge sizes, are not regular files, or disagree with
 * themselves: each must be an ir::Error naming the input, returned at once and without large
 * allocations (never a hang, a crash or gigabytes of zeros).
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"
#include "ir_tf/checkpoint.h"
#include "ir_tf/import.h"
#include "ir_tf/model.h"
#include "ir_tf/npy.h"
#include "limits_test_util.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using test::ErrorWithin;
using test::PeakRssMiB;
using test::TempDir;
using test::pbtxt::Attr;
using test::pbtxt::Node;

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(HostileInputTest, FeedsAndModelsThatAreNotRegularFilesFailAtOnce) {
  TempDir dir;
  EXPECT_CONTAINS(ErrorWithin([] { ReadNpy("/dev/zero"); }),
                  "cannot read '/dev/zero': it is a character device, not a regular file");
  std::string fifo = dir.Fifo("feed.npy");
  EXPECT_CONTAINS(ErrorWithin([&] { ReadNpy(fifo); }), "'" + fifo + "': it is a FIFO, not a regular file");
  std::string model = dir.Fifo("model.pb");
  EXPECT_CONTAINS(ErrorWithin([&] { LoadModel(model); }), "'" + model + "': it is a FIFO, not a regular file");
  std::string index = dir.Fifo("ckpt.index");
  EXPECT_CONTAINS(ErrorWithin([&] { CheckpointReader(dir.path() + "/ckpt"); }), "it is a FIFO");
  EXPECT_CONTAINS(ErrorWithin([&] { ReadNpy(dir.path()); }), "it is a directory, not a regular file");
}

TEST(HostileInputTest, LargeSplatConstantImportsAsAFillWithoutMaterializing) {
  // A 1 GiB float Const written as one float_val (TensorFlow's splat encoding): a few bytes of GraphDef.
  std::string shape = "tensor_shape { dim { size: 268435456 } }";
  std::string graph =
      Node("big", "Const", {},
           Attr("dtype", "type: DT_FLOAT") + Attr("value", "tensor { dtype: DT_FLOAT " + shape + " float_val: 1.5 }"));
  TFModel model = test::TextModel(graph);
  ASSERT_LT(model.graph_def.size(), 300u);
  long before = PeakRssMiB();
  Graph imported;
  EXPECT_EQ(ErrorWithin([&] { imported = ImportGraphDef(model.graph_def); }), "<no error>");
  EXPECT_LT(PeakRssMiB() - before, 256) << "importing a splat constant must not expand it";
  ASSERT_EQ(imported.outputs.size(), 1u);
  EXPECT_EQ(imported.outputs[0].node->op()->name, "fill");
}

TEST(HostileInputTest, SplatConstantsKeepTheirValues) {
  // 2 MiB: above the size up to which splats stay `constant` nodes.
  std::string value = "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 524288 } } float_val: 2.5 }";
  std::string graph = Node("c", "Const", {}, Attr("dtype", "type: DT_FLOAT") + Attr("value", value)) +
                      Node("s", "Sum", {"c", "axis"}, test::pbtxt::Type() + Attr("Tidx", "type: DT_INT32")) +
                      test::pbtxt::Ints("axis", {0});
  std::vector<NDArray> out = test::RunText(graph, {}, {"c", "s"});
  ASSERT_EQ(out[0].Size(), 524288);
  EXPECT_EQ(out[0].data<float>()[0], 2.5f);
  EXPECT_EQ(out[0].data<float>()[524287], 2.5f);
  test::ExpectClose(out[1], {2.5 * 524288}, "sum of the splat", 0, 0);
}

TEST(HostileInputTest, TensorContentOfTheWrongSizeNamesNodeAndBothSizes) {
  std::string value = "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 268435456 } } tensor_content: \"abcd\" }";
  std::string graph = Node("lying", "Const", {}, Attr("dtype", "type: DT_FLOAT") + Attr("value", value));
  std::string error = ErrorWithin([&] { ImportGraphDef(test::TextModel(graph).graph_def); });
  EXPECT_CONTAINS(error, "lying");
  EXPECT_CONTAINS(error, "tensor_content holds 4 bytes but shape [268435456] of DT_FLOAT needs 1073741824");
}

/*! \brief A SavedModel whose call node passes `inputs` data inputs to a function with two bound inputs. */
std::string SavedModelWithCall(const std::string& inputs) {
  return "meta_graphs { meta_info_def { tags: 'serve' } graph_def { "
         "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } } "
         "node { name: 'call' op: 'StatefulPartitionedCall' " +
         inputs +
         "  attr { key: 'f' value { func { name: 'fn' } } } } } "
         "signature_def { key: 'serving_default' value { } } "
         "object_graph_def { nodes { children { node_id: 1 local_name: 'v' } } "
         "nodes { variable { name: 'v' } } "
         "concrete_functions { key: 'fn' value { bound_inputs: 1 bound_inputs: 1 } } } }";
}

TEST(HostileInputTest, CallWithFewerInputsThanBoundInputsNamesNodeFunctionAndCounts) {
  TempDir dir;
  dir.File("saved_model.pbtxt", SavedModelWithCall("input: 'x'"));
  EXPECT_ERROR(LoadModel(dir.path()),
               "node 'call' (op StatefulPartitionedCall) calls function 'fn' with 1 data inputs, fewer than its 2 "
               "bound inputs");
  dir.File("saved_model.pbtxt", SavedModelWithCall("input: 'x' input: '^x'"));
  EXPECT_ERROR(LoadModel(dir.path()), "with 1 data inputs, fewer than its 2 bound inputs");
}

}  // namespace
}  // namespace tf
}  // namespace ir
