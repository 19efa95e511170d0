// An op library with an opaque op that brings its own device kernel, written once in portable
// kernel C and built only against include/ir/: loaded at run time, it runs on every device
// target (tests/opencl/opencl_op_library_test.cc, tests/cuda/cuda_op_library_test.cc).
//
// mirror_rows(x, scale): y[r, c] = scale * x[r, C - 1 - c] for x of shape [R, C].
#include <dmlc/parameter.h>

#include <vector>

#include "ir/device_kernel.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace {

struct MirrorParam : public dmlc::Parameter<MirrorParam> {
  double scale;
  DMLC_DECLARE_PARAMETER(MirrorParam) {
    DMLC_DECLARE_FIELD(scale).set_default(1.0).describe("Factor of every element.");
  }
};
DMLC_REGISTER_PARAMETER(MirrorParam);

bool MirrorShape(const ir::NodeAttrs& attrs, std::vector<ir::Shape>* in, std::vector<ir::Shape>* out) {
  const ir::Shape& x = (*in)[0];
  if (!x.rank_known()) return false;
  IR_CHECK(x.ndim() == 2) << "mirror_rows '" << attrs.name << "': input must be a matrix, got " << x;
  (*out)[0] = x;
  return x.is_known();
}

bool MirrorType(const ir::NodeAttrs& attrs, std::vector<ir::DType>* in, std::vector<ir::DType>* out) {
  ir::DType t = (*in)[0];
  IR_CHECK(t == ir::DType::kUnknown || t == ir::DType::kFloat32 || t == ir::DType::kFloat64)
      << "mirror_rows '" << attrs.name << "': float32 or float64 input, got " << ir::DTypeName(t);
  (*out)[0] = t;
  return t != ir::DType::kUnknown;
}

template <typename T>
void Mirror(const T* x, T* y, int64_t rows, int64_t cols, double scale) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = static_cast<T>(scale) * x[r * cols + cols - 1 - c];
  }
}

void MirrorCompute(const ir::OpContext&, const ir::NodeAttrs& attrs, const std::vector<ir::NDArray>& in,
                   const std::vector<ir::NDArray>& out) {
  double scale = dmlc::get<MirrorParam>(attrs.parsed).scale;
  int64_t rows = in[0].shape()[0], cols = in[0].shape()[1];
  if (in[0].dtype() == ir::DType::kFloat32) {
    Mirror(static_cast<const float*>(in[0].data()), static_cast<float*>(out[0].data()), rows, cols, scale);
  } else {
    Mirror(static_cast<const double*>(in[0].data()), static_cast<double*>(out[0].data()), rows, cols, scale);
  }
}

const ir::DeviceKernelSource& kMirrorSource = ir::RegisterDeviceKernelSource(ir::DeviceKernelSource{
    "test_mirror_rows",
    R"(IR_KERNEL void test_mirror_rows(IR_CONST_ARRAY(T, x), IR_ARRAY(T, y), const long cols, const long n,
                                   const T scale) {
  IR_OFFSET(x);
  IR_OFFSET(y);
  IR_THREAD_LOOP(i, n) {
    const long r = i / cols, c = i % cols;
    y[i] = scale * x[r * cols + cols - 1 - c];
  }
}
)",
    {ir::DType::kFloat32, ir::DType::kFloat64}});

void MirrorDeviceKernel(ir::DeviceKernelContext& dev, const ir::NodeAttrs& attrs, const std::vector<ir::NDArray>& in,
                        const std::vector<ir::NDArray>& out) {
  const MirrorParam& param = dmlc::get<MirrorParam>(attrs.parsed);
  ir::DeviceArgs args;
  args.Array(in[0]).Array(out[0]).Value(int64_t{in[0].shape()[1]}).Value(int64_t{in[0].Size()});
  args.Scalar(in[0].dtype(), param.scale);
  dev.Launch(kMirrorSource, in[0].dtype(), "test_mirror_rows", args, ir::DeviceLaunch::Threads(in[0].Size()));
}

}  // namespace

IR_REGISTER_OP(mirror_rows)
    .describe("y[r, c] = scale * x[r, C - 1 - c] (a test op with its own device kernel).")
    .set_num_inputs(1)
    .set_input_names({"x"})
    .set_param<MirrorParam>()
    .set_attr<ir::FInferShape>("FInferShape", MirrorShape)
    .set_attr<ir::FInferType>("FInferType", MirrorType)
    .set_attr<ir::FCompute>("FCompute", MirrorCompute)
    .set_attr<ir::TOpPattern>("TOpPattern", ir::kOpaque)
    .set_attr<ir::FDeviceKernel>("FDeviceKernel", MirrorDeviceKernel);
