/*!
 * \file convert_tensor_list.h
 * \brief What TF2's While converter needs to know of TensorLists (convert_tensor_list.cc): a
 * list is our dense tensor array [size, elem...], threaded through loops as a loop variable.
 */
#ifndef IR_TF_CONVERT_TENSOR_LIST_H_
#define IR_TF_CONVERT_TENSOR_LIST_H_

#include <string>

#include "convert_functional.h"
#include "import_context.h"

namespace ir {
namespace tf {

/*!
 * \brief Whether `list` is a TensorList made before its elements' rank is known (element_shape -1):
 * it stands for the list until a write, or a loop body writing it, tells the rank.
 */
bool IsUnrankedList(const NodeEntry& list);
/*! \brief The empty list `list` (IsUnrankedList) stands for, with elements of rank `rank`. */
NodeEntry RankedList(ImportContext& ctx, const NodeEntry& list, int rank);
/*!
 * \brief The shape a list loop variable keeps across iterations: `entering` with its element
 * dimensions of 0 (nothing written yet) unknown, and its size unknown when `resizes`.
 */
Shape ListLoopShape(const Shape& entering, bool resizes);
/*! \brief Whether function `fn` (or a function it uses) may change a list's size (push, pop, resize). */
bool MayResizeLists(const FunctionScope& scope, const std::string& fn);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_CONVERT_TENSOR_LIST_H_
