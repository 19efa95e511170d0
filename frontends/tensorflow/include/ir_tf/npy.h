/*!
 * \file npy.h
 * \brief Reading and writing NumPy `.npy` files (format versions 1 to 3; C or Fortran order read).
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
 * Fortran-order files are rearranged into C order.
 * \throws ir::Error naming `origin` for malformed headers (magic, version, dict keys and values,
 * negative or overflowing dimensions), other dtypes, or data bytes that differ from what the
 * shape needs (checked before anything is allocated).
 */
NDArray ParseNpy(const std::string& bytes, const std::string& origin = "<memory>");
/*! \brief ParseNpy of a file's contents; the path must be a regular file (not a FIFO or device). */
NDArray ReadNpy(const std::string& path);
/*! \brief `.npy` (version 1.0, little-endian, C order) bytes holding `array`. */
std::string FormatNpy(const NDArray& array);
/*! \brief Writes FormatNpy(array) to `path`; throws ir::Error when the file cannot be written. */
void WriteNpy(const std::string& path, const NDArray& array);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_NPY_H_
