/*!
 * \file converter.h
 * \brief The converter table: for each TensorFlow op name, a function that builds our nodes
 * for one TF node with TensorFlow's attribute semantics.
 */
#ifndef IR_TF_CONVERTER_H_
#define IR_TF_CONVERTER_H_

#include <functional>
#include <string>
#include <vector>

#include "import_context.h"

namespace ir {
namespace tf {

/*! \brief Converts the node `ctx` describes; returns one entry per TF output of the node. */
using Converter = std::function<std::vector<NodeEntry>(ImportContext& ctx)>;

/*! \brief The converter of `tf_op`, or nullptr. */
const Converter* FindConverter(const std::string& tf_op);
/*! \brief Registers `fn` for every name in `tf_ops` (called from static initializers). */
bool RegisterConverter(const std::vector<std::string>& tf_ops, Converter fn);
/*! \brief Every TF op name with a converter, sorted. */
std::vector<std::string> ConverterNames();

/*! \brief `IR_TF_CONVERTER({"Add", "AddV2"}, fn);` registers fn for those TF ops. */
#define IR_TF_CONVERTER(...) \
  static bool IR_UNIQUE_NAME_(__ir_tf_converter_) __attribute__((unused)) = ::ir::tf::RegisterConverter(__VA_ARGS__)

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_CONVERTER_H_
