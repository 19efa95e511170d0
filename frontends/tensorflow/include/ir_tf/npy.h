/*!
 * \file npy.h
 * \brief Reading and writing NumPy `.npy` files (format versions 1 to 3, C order).
 */
#ifndef IR_TF_NPY_H_
#define IR_TF_NPY_H_

#include <string>

#include "ir/ndarray.h"

namespace ir {
namespace tf {

/*!
 * \brief Parses `.npy` bytes. float32/64, int32/64 and bool load as they are; int8/16, uint8/16
 * widen to int32, uint32 to int64, float16 to float32. Either byte order.
 * \throws ir::Error naming `origin` for malformed headers, Fortran order, truncated data or
 * other dtypes.
 */
NDArray ParseNpy(const std::string& bytes, const std::string& origin = "<memory>");
/*! \brief ParseNpy of a file's contents. */
NDArray ReadNpy(const std::string& path);
/*! \brief `.npy` (version 1.0, little-endian, C order) bytes holding `array`. */
std::string FormatNpy(const NDArray& array);
/*! \brief Writes FormatNpy(array) to `path`; throws ir::Error when the file cannot be written. */
void WriteNpy(const std::string& path, const NDArray& array);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_NPY_H_
