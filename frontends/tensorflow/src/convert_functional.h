/*!
 * \file convert_functional.h
 * \brief The function library TF2 functional control flow (If, While, Case) takes its bodies
 * from, and the state that keeps nested body imports finite.
 */
#ifndef IR_TF_CONVERT_FUNCTIONAL_H_
#define IR_TF_CONVERT_FUNCTIONAL_H_

#include <map>
#include <string>
#include <vector>

#include "function_library.h"
#include "ir_tf_graph.pb.h"

namespace ir {
namespace tf {

/*!
 * \brief One import's function library, shared by the importers of nested bodies: a body that
 * is being imported cannot be entered again (recursion), bodies nest at most 32 deep, and all
 * bodies together have at most 2^18 nodes (a function calling two functions each calling two...
 * would otherwise grow exponentially).
 */
struct FunctionScope {
  explicit FunctionScope(tfproto::FunctionDefLibrary lib)
      : library(std::move(lib)), functions(LibraryFunctions(library)) {}
  FunctionScope(const FunctionScope&) = delete;
  FunctionScope& operator=(const FunctionScope&) = delete;

  tfproto::FunctionDefLibrary library;
  /*! \brief The library's functions by name (pointing into `library`). */
  std::map<std::string, const tfproto::FunctionDef*> functions;
  /*! \brief Functions whose bodies are being imported, outermost first. */
  std::vector<std::string> stack;
  /*! \brief Nodes of every body imported so far. */
  size_t nodes = 0;
};

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_CONVERT_FUNCTIONAL_H_
