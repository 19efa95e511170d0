/*!
 * \file array_common.h
 * \brief Small helpers the array op files (array_shape.cc, array_slice.cc, array_metadata.cc)
 * and random.cc share: dtype rules, dtype attributes and list printing.
 */
#ifndef IR_OPS_ARRAY_ARRAY_COMMON_H_
#define IR_OPS_ARRAY_ARRAY_COMMON_H_

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_common.h"

namespace ir {
namespace op {

/*! \brief Every output has input 0's dtype (and input 0 gets the outputs' dtype); other inputs are free. */
inline bool SameTypeAsFirstInput(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  for (size_t j = 0; j < out->size(); ++j) AssignType(attrs, StrCat("output ", j), &(*out)[j], (*in)[0]);
  for (size_t j = 0; j < out->size(); ++j) AssignType(attrs, "input 0", &(*in)[0], (*out)[j]);
  return AllKnown(*in, *out);
}

/*! \brief The dtype named by attribute `field`; throws naming the node unless it is one of `allowed`. */
inline DType DTypeAttr(const NodeAttrs& attrs, const std::string& field, const std::string& value,
                       const DTypeSet& allowed) {
  DType dtype = DType::kUnknown;
  try {
    dtype = DTypeFromName(value);
  } catch (const Error& err) {
    throw Error(StrCat(NodeDesc(attrs), ": ", field, ": ", err.what()));
  }
  CheckDType(attrs, field, dtype, allowed);
  return dtype;
}

/*! \brief "[4,-1]": a list of integers in the notation shapes print with. */
inline std::string ListText(const std::vector<int64_t>& values) { return StrCat("[", Join(values, ","), "]"); }

/*! \brief The attribute text of a list of integers: "(1,2)", as IntList parses it. */
inline std::string IntListAttr(std::vector<int64_t> values) {
  IntList list;
  list.values = std::move(values);
  std::ostringstream os;
  os << list;
  return os.str();
}

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_ARRAY_ARRAY_COMMON_H_
