/*!
 * \file tf_test_util.h
 * \brief Helpers of the TensorFlow frontend tests: where the real graphs are, CSV oracles,
 * importing text GraphDefs, comparing arrays.
 */
#ifndef IR_TESTS_TF_TEST_UTIL_H_
#define IR_TESTS_TF_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/ndarray.h"
#include "ir_tf/model.h"
#include "ir_tf/session.h"

namespace ir {
namespace tf {
namespace test {

/*! \brief $IR_TF_GRAPHS_DIR, else <repo>/../shared/tf_graphs. */
std::string GraphsDir();
/*! \brief GraphsDir()/relative, or "" when that file or directory is absent. */
std::string GraphPath(const std::string& relative);

/*! \brief Skips the test with a message when a real graph is not available. */
#define IR_TF_REQUIRE(var, relative)                                                                             \
  std::string var = ::ir::tf::test::GraphPath(relative);                                                         \
  if (var.empty()) {                                                                                             \
    GTEST_SKIP() << "real TensorFlow graph '" << relative << "' not found under " << ::ir::tf::test::GraphsDir() \
                 << " (set IR_TF_GRAPHS_DIR)";                                                                   \
  }

/*! \brief Numbers of a dl4j oracle CSV (one per line). */
std::vector<double> ReadCsv(const std::string& path);
/*! \brief The shape in a dl4j `.shape` file (one dim per line; a single 0 is a scalar). */
Shape ReadShapeFile(const std::string& path);
/*! \brief An array of `dtype` with `values` (converted). */
NDArray MakeArray(const Shape& shape, DType dtype, const std::vector<double>& values);
/*! \brief The elements of a numeric or bool array as doubles. */
std::vector<double> ToDoubles(const NDArray& array);
/*! \brief Every element within atol + rtol * |expected|; the failure names `what` and the first bad index. */
void ExpectClose(const NDArray& actual, const std::vector<double>& expected, const std::string& what,
                 double atol = 1e-5, double rtol = 1e-5);

/*! \brief Builders of text-format GraphDef nodes, to write test graphs compactly. */
namespace pbtxt {
/*! \brief `node { name: .. op: .. input: .. <attrs> }`. */
std::string Node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs = {},
                 const std::string& attrs = "");
/*! \brief `attr { key: .. value { <value> } }`. */
std::string Attr(const std::string& key, const std::string& value);
/*! \brief The attribute T (or `key`) of type `dtype` ("DT_FLOAT"). */
std::string Type(const std::string& dtype = "DT_FLOAT", const std::string& key = "T");
/*! \brief `shape { dim { size: .. } ... }` (-1 for unknown). */
std::string ShapeProto(const std::vector<int64_t>& dims);
/*! \brief A Const of `dtype` with typed values (`field` e.g. "float_val") and shape. */
std::string Const(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& values,
                  const std::string& dtype = "DT_FLOAT", const std::string& field = "float_val");
/*! \brief An int32 vector (or scalar when `scalar`) Const. */
std::string Ints(const std::string& name, const std::vector<int64_t>& values, bool scalar = false);
std::string Placeholder(const std::string& name, const std::vector<int64_t>& dims,
                        const std::string& dtype = "DT_FLOAT");
std::string Variable(const std::string& name, const std::vector<int64_t>& dims, const std::string& dtype = "DT_FLOAT");
/*!
 * \brief A library function: args and results "name:DT_X", body nodes (written with Node), rets
 * "result" -> "node:out:i".
 */
std::string Function(const std::string& name, const std::vector<std::string>& args,
                     const std::vector<std::string>& results, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& rets);
/*! \brief A function attribute `key` naming `fn`. */
std::string FuncAttr(const std::string& key, const std::string& fn);
/*! \brief The graph's `library` holding `functions` (each written with Function). */
std::string Library(const std::vector<std::string>& functions);
}  // namespace pbtxt

/*! \brief A model from a text GraphDef. */
TFModel TextModel(const std::string& pbtxt);
/*! \brief Runs a text GraphDef once: feeds by name, returns the fetches. */
std::vector<NDArray> RunText(const std::string& pbtxt, const std::map<std::string, NDArray>& feeds,
                             const std::vector<std::string>& fetches, bool fusion = false);

}  // namespace test
}  // namespace tf
}  // namespace ir

#endif  // IR_TESTS_TF_TEST_UTIL_H_
