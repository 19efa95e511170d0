/*!
 * \file im2col.h
 * \brief The input windows of a convolution as rows of a matrix (im2col) and the transpose
 * (col2im), shared by conv2d's direct kernels and extract_image_patches.
 *
 * Row p of the matrix is output pixel p (image-major, then row, then column); its KH * KW * C
 * entries are the window's cells in (kh, kw, c) order (TensorFlow's ExtractImagePatches order),
 * zeros in the padding. The input is in the geometry's layout (NHWC or NCHW).
 */
#ifndef IR_OPS_IM2COL_H_
#define IR_OPS_IM2COL_H_

#include <algorithm>
#include <array>

#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace nn {

/*! \brief Rows [images * OH * OW, KH * KW * C] of the input windows of `images` images of x. */
template <typename T>
void Im2Col(const Geometry& g, const T* x, T* col, int64_t images) {
  std::array<int64_t, 4> st = g.InputStrides();
  int64_t k = g.kh * g.kw * g.c, pixels = g.oh * g.ow;
  ParallelFor(
      images * pixels,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          T* row = col + r * k;
          const T* image = x + r / pixels * st[0];
          int64_t p = r % pixels, left = p % g.ow * g.sw - g.pad_left;
          // NHWC windows without column dilation or padding read each kernel row as one run.
          bool runs = g.dw == 1 && st[1] == 1 && left >= 0 && left + g.kw <= g.w;
          for (int64_t i = 0; i < g.kh; ++i) {
            int64_t ih = p / g.ow * g.sh - g.pad_top + i * g.dh;
            if (ih < 0 || ih >= g.h) {
              row = std::fill_n(row, g.kw * g.c, T(0));
              continue;
            }
            const T* line = image + ih * st[2];
            if (runs) {
              row = std::copy_n(line + left * st[3], g.kw * g.c, row);
              continue;
            }
            for (int64_t j = 0; j < g.kw; ++j, row += g.c) {
              int64_t iw = left + j * g.dw;
              if (iw < 0 || iw >= g.w) {
                std::fill(row, row + g.c, T(0));
                continue;
              }
              const T* src = line + iw * st[3];
              for (int64_t c = 0; c < g.c; ++c) row[c] = src[c * st[1]];
            }
          }
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(k, 1)));
}

/*! \brief Adds the rows of Im2Col back into `images` (zeroed) images of x: its transpose. */
template <typename T>
void Col2Im(const Geometry& g, const T* col, T* x, int64_t images) {
  std::array<int64_t, 4> st = g.InputStrides();
  int64_t k = g.kh * g.kw * g.c, pixels = g.oh * g.ow;
  // Each task owns one channel of one image, so overlapping windows never race.
  ParallelFor(
      images * g.c,
      [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          int64_t c = t % g.c;
          const T* rows = col + t / g.c * pixels * k + c;
          T* image = x + t / g.c * st[0] + c * st[1];
          for (int64_t p = 0; p < pixels; ++p) {
            const T* row = rows + p * k;
            for (int64_t i = 0; i < g.kh; ++i) {
              int64_t ih = p / g.ow * g.sh - g.pad_top + i * g.dh;
              for (int64_t j = 0; j < g.kw; ++j, row += g.c) {
                int64_t iw = p % g.ow * g.sw - g.pad_left + j * g.dw;
                if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) image[ih * st[2] + iw * st[3]] += *row;
              }
            }
          }
        }
      },
      std::max<int64_t>(1, 4096 / std::max<int64_t>(pixels * g.kh * g.kw, 1)));
}

}  // namespace nn
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_IM2COL_H_
