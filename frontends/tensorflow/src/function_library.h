/*!
 * \file function_library.h
 * \brief A GraphDef's function library as TensorFlow admits it (FunctionLibraryDefinition): each
 * function once, by name.
 */
#ifndef IR_TF_FUNCTION_LIBRARY_H_
#define IR_TF_FUNCTION_LIBRARY_H_

#include <map>
#include <string>

#include "ir_tf_function.pb.h"

namespace ir {
namespace tf {

/*!
 * \brief The functions of `library` by name (pointing into it), checked as TensorFlow's import
 * checks them: a function defined twice identically (FunctionDefsEqual: signature attrs, body
 * nodes and control inputs in any order, internal `_` attributes of body nodes ignored) is kept
 * once; defined twice differently, or named like an op the importer converts, or given two
 * different gradient functions, it is an error.
 * \throws ir::Error with TensorFlow's message ("Cannot add function 'f' because a different
 *         function with the same name already exists.").
 */
std::map<std::string, const tfproto::FunctionDef*> LibraryFunctions(const tfproto::FunctionDefLibrary& library);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUNCTION_LIBRARY_H_
