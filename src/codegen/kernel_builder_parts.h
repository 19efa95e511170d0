/*!
 * \file kernel_builder_parts.h
 * \brief What the map/reduce and the row kernel builders share: buffer indexing over a
 * domain, the member shapes and dtypes of a group, and the kernel's parameters.
 */
#ifndef IR_CODEGEN_KERNEL_BUILDER_PARTS_H_
#define IR_CODEGEN_KERNEL_BUILDER_PARTS_H_

#include <unordered_map>
#include <vector>

#include "ir/codegen.h"
#include "ir/fusion.h"

namespace ir {
namespace codegen {

/*! \brief Original domain dimensions [begin, end) iterated by one loop variable. */
struct Range {
  int begin;
  int end;
};

/*!
 * \brief Deepest expression a let or store holds: printers and hashing recurse to it, and an
 * op's expression may grow with its inputs (add_n), so deeper parts become lets.
 */
constexpr int kMaxExprDepth = 64;

/*! \brief Element strides of `buffer` broadcast to `domain` (right-aligned; 0 where broadcast). */
std::vector<int64_t> StridesIn(const Shape& buffer, const Shape& domain);

/*! \brief Index of a buffer at loop position (i0, i1, ...) for loop variables over `ranges`. */
ast::Expr IndexExpr(const std::vector<int64_t>& strides, const std::vector<Range>& ranges, const Shape& domain);

/*! \brief Product of the domain's extents over a range. */
int64_t Extent(const Range& r, const Shape& domain);

/*! \brief The number of group input variable `var` ("in<k>" -> k). */
int InputIndex(const Node* var);

/*! \brief Shapes and dtypes of every entry of the group's subgraph, inferred from its inputs'. */
void InferGroupEntries(const FusedGroup& group, const std::vector<Shape>& input_shapes,
                       const std::vector<DType>& input_types, ShapeVector* shapes, DTypeVector* types);

/*!
 * \brief Appends the params "in<k>" (written when mutated) and "out<j>" (outputs that alias no
 * input) to `kernel`; returns output index -> param index.
 */
std::unordered_map<int, int> AddGroupParams(const FusedGroup& group, const std::vector<DType>& input_types,
                                            const DTypeVector& types, Kernel* kernel);

/*! \brief The row kernel of a "row" group (row_kernel_builder.cc). */
Kernel BuildRowKernel(const FusedGroup& group, const std::vector<Shape>& input_shapes,
                      const std::vector<DType>& input_types);

}  // namespace codegen
}  // namespace ir

#endif  // IR_CODEGEN_KERNEL_BUILDER_PARTS_H_
