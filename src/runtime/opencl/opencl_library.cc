/*!
 * \file opencl_library.cc
 * \brief Assembling, building and launching the hand-written kernel library.
 */
#include "runtime/opencl/opencl_library.h"

#include "runtime/device/device_module.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace ir {
namespace opencl {
namespace {

struct Text {
  std::string name;
  LibraryTypes types;
  std::string text;
};

std::vector<Text>& Texts() {
  static auto* texts = new std::vector<Text>();
  return *texts;
}

// Definitions every library text may use. ir_strided matches StridedWalk (all longs, so the
// layout is the same on host and device).
const char kPrelude[] = R"CL(
/* Separate multiplies and adds, as the CPU kernels compute them. */
#pragma OPENCL FP_CONTRACT OFF

typedef struct { long ndim; long extent[8]; long stride[8]; } ir_strided;

/* The geometry of a convolution or pooling window (see WindowArg). */
typedef struct {
  long n, c, h, w, oc, oh, ow, kh, kw, sh, sw, dh, dw, pad_top, pad_left;
  long xs[4];
  long ys[4];
} ir_window;

/* Offset of element i (row-major over w.extent) of a strided walk. */
inline long ir_offset(const ir_strided w, long i) {
  long offset = 0;
  for (int d = (int)w.ndim - 1; d >= 0; --d) {
    offset += (i % w.extent[d]) * w.stride[d];
    i /= w.extent[d];
  }
  return offset;
}
)CL";

struct TypeInfo {
  const char* name;
  const char* lowest;
  const char* highest;
  bool is_float;
  bool is_numeric;
};

TypeInfo InfoOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {"float", "(-INFINITY)", "INFINITY", true, true};
    case DType::kFloat64:
      return {"double", "(-(double)INFINITY)", "((double)INFINITY)", true, true};
    case DType::kInt32:
      return {"int", "INT_MIN", "INT_MAX", false, true};
    case DType::kInt64:
      return {"long", "LONG_MIN", "LONG_MAX", false, true};
    case DType::kBool:
      return {"uchar", "0", "1", false, false};
    default:
      throw Error(StrCat("OpenCL kernel library: no element type for dtype ", DTypeName(dtype)));
  }
}

}  // namespace

OpenCLLibrarySource::OpenCLLibrarySource(const char* name, LibraryTypes types, const char* text) {
  Texts().push_back(Text{name, types, text});
}

std::string LibrarySourceFor(DType dtype) {
  TypeInfo info = InfoOf(dtype);
  bool fp64 = GetDevice(0).fp64;
  std::ostringstream os;
  os << "/* ir: hand-written OpenCL kernels for element type " << DTypeName(dtype) << " */\n";
  if (fp64) os << "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  os << "#define IR_HAS_FP64 " << (fp64 ? 1 : 0) << "\n"
     << "#define T " << info.name << "\n"
     << "#define T_LOWEST " << info.lowest << "\n"
     << "#define T_HIGHEST " << info.highest << "\n"
     << "#define IR_T_FLOAT " << (info.is_float ? 1 : 0) << "\n"
     << "#define IR_T_NUMERIC " << (info.is_numeric ? 1 : 0) << "\n"
     << "#define IR_T_IS_DOUBLE " << (dtype == DType::kFloat64 ? 1 : 0)
     << "\n"
     // 2^-24 or 2^-53: the grid of uniform values of the element type (random_utils.h).
     << "#define IR_UNIT_SCALE " << (dtype == DType::kFloat64 ? "(1.0 / 9007199254740992.0)" : "(1.0f / 16777216.0f)")
     << "\n"
     << kPrelude;
  // Sorted by name: the text (and so its cache key) does not depend on static-initialization order.
  std::vector<const Text*> texts;
  for (const Text& t : Texts()) texts.push_back(&t);
  std::sort(texts.begin(), texts.end(), [](const Text* a, const Text* b) { return a->name < b->name; });
  for (const Text* t : texts) {
    bool included = t->types == LibraryTypes::kAll || (t->types == LibraryTypes::kNumeric && info.is_numeric) ||
                    (t->types == LibraryTypes::kFloat && info.is_float);
    if (included) os << "\n/* ---- " << t->name << " ---- */\n" << t->text;
  }
  return os.str();
}

StridedWalk MakeWalk(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides,
                     const std::string& what) {
  std::vector<int64_t> e, s;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (extents[d] == 1) continue;
    if (!e.empty() && s.back() == strides[d] * extents[d]) {
      e.back() *= extents[d];
      s.back() = strides[d];
    } else {
      e.push_back(extents[d]);
      s.push_back(strides[d]);
    }
  }
  IR_CHECK(e.size() <= static_cast<size_t>(kMaxDims))
      << what << ": " << e.size() << " dimensions remain after merging, OpenCL kernels take at most " << kMaxDims;
  StridedWalk walk;
  walk.ndim = static_cast<cl_long>(e.size());
  for (size_t d = 0; d < e.size(); ++d) {
    walk.extent[d] = e[d];
    walk.stride[d] = s[d];
  }
  return walk;
}

WindowArg MakeWindowArg(const op::nn::Geometry& g) {
  WindowArg a;
  a.n = g.n;
  a.c = g.c;
  a.h = g.h;
  a.w = g.w;
  a.oc = g.oc;
  a.oh = g.oh;
  a.ow = g.ow;
  a.kh = g.kh;
  a.kw = g.kw;
  a.sh = g.sh;
  a.sw = g.sw;
  a.dh = g.dh;
  a.dw = g.dw;
  a.pad_top = g.pad_top;
  a.pad_left = g.pad_left;
  std::array<int64_t, 4> xs = g.InputStrides(), ys = g.OutputStrides();
  for (int i = 0; i < 4; ++i) {
    a.xs[i] = xs[i];
    a.ys[i] = ys[i];
  }
  return a;
}

void RunKernel(const OpContext& ctx, DType dtype, const std::string& name, const KernelArgs& args, int64_t global,
               int64_t local) {
  if (local <= 0) local = 64;
  device::GetModule("opencl", LibrarySourceFor(dtype))
      ->program()
      .Launch(name, args.values(), (global + local - 1) / local, local, ctx);
}

void Fill(const OpContext& ctx, const NDArray& array, double value) {
  if (array.nbytes() == 0) return;
  union {
    cl_float f32;
    cl_double f64;
    cl_int i32;
    cl_long i64;
    cl_uchar b;
  } pattern;
  switch (array.dtype()) {
    case DType::kFloat32:
      pattern.f32 = static_cast<cl_float>(value);
      break;
    case DType::kFloat64:
      pattern.f64 = static_cast<cl_double>(value);
      break;
    case DType::kInt32:
      pattern.i32 = static_cast<cl_int>(value);
      break;
    case DType::kInt64:
      pattern.i64 = static_cast<cl_long>(value);
      break;
    case DType::kBool:
      pattern.b = static_cast<cl_uchar>(value != 0);
      break;
    default:
      throw Error(StrCat("OpenCL fill of dtype ", DTypeName(array.dtype())));
  }
  const CLDevice& device = GetDevice(0);
  device::CheckOnDevice(array, Device{DeviceType::kOpenCL, device.id}, "filled array");
  Check(clEnqueueFillBuffer(QueueOf(device, ctx.queue), static_cast<cl_mem>(array.handle()), &pattern,
                            DTypeSize(array.dtype()), array.byte_offset(), array.nbytes(), 0, nullptr, nullptr),
        "clEnqueueFillBuffer");
}

void CopyUnlessAliased(const NDArray& src, const NDArray& dst) {
  if (src.storage() == dst.storage() && src.byte_offset() == dst.byte_offset()) return;
  dst.CopyFrom(src.Reshape(dst.shape()));
}

void CheckArrays(const std::vector<NDArray>& arrays, const NodeAttrs& attrs) {
  for (size_t i = 0; i < arrays.size(); ++i) {
    device::CheckOnDevice(arrays[i], Device{DeviceType::kOpenCL, 0},
                          StrCat("array ", i, " of node '", attrs.name, "'"));
  }
}

}  // namespace opencl
}  // namespace ir
