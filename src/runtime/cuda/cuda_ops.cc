/*!
 * \file cuda_ops.cc
 * \brief What CUDA op kernels share: kernel families, parameters, copies, host runs.
 */
#include "runtime/cuda/cuda_ops.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "codegen/single_op_kernel.h"
#include "runtime/host_fallback.h"

namespace ir {
namespace cuda {
namespace {

const char* ElementType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kInt32:
      return "int";
    case DType::kInt64:
      return "long long";
    case DType::kBool:
      return "unsigned char";
    default:
      throw Error(StrCat("CUDA kernels: no element type for dtype ", DTypeName(dtype)));
  }
}

// Device helpers every family may use (after `typedef ... T;`).
const char* kFamilyHelpers = R"(struct ir_strided {
  long long ndim;
  long long dims[8];
  long long strides[8];
};
/* The element offset of flat index `index` of the dims, walked with the strides. */
__device__ inline long long ir_offset(const ir_strided& s, long long index) {
  long long offset = 0;
  for (int d = (int)s.ndim - 1; d >= 0; --d) {
    offset += (index % s.dims[d]) * s.strides[d];
    index /= s.dims[d];
  }
  return offset;
}
__device__ inline float ir_exp(float x) { return expf(x); }
__device__ inline double ir_exp(double x) { return exp(x); }
__device__ inline float ir_log(float x) { return logf(x); }
__device__ inline double ir_log(double x) { return log(x); }
#define IR_THREAD_LOOP(i, n) \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)
#define IR_BLOCK_LOOP(i, n) for (long long i = blockIdx.x; i < (n); i += gridDim.x)
/* The sum of every thread's v over the block (blockDim.x a power of two), for every thread. */
__device__ inline T ir_block_sum(T v, T* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  T total = scratch[0];
  __syncthreads();
  return total;
}
)";

struct FamilyRegistry {
  std::mutex mutex;
  std::vector<const KernelFamily*> families;
  std::map<std::pair<std::string, DType>, std::shared_ptr<Launcher>> modules;
};

FamilyRegistry& Registry() {
  static auto* registry = new FamilyRegistry();
  return *registry;
}

/*! \brief The documented default in dmlc's "type, optional, default=value" (quotes removed). */
bool DocumentedDefault(const std::string& type, std::string* value) {
  size_t at = type.find("default=");
  if (at == std::string::npos) return false;
  *value = type.substr(at + 8);
  if (value->size() >= 2 && value->front() == '\'' && value->back() == '\'')
    *value = value->substr(1, value->size() - 2);
  return true;
}

}  // namespace

bool RegisterFamily(const KernelFamily* family) {
  FamilyRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.families.push_back(family);
  return true;
}

std::vector<const KernelFamily*> Families() {
  FamilyRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.families;
}

std::string FamilySource(const KernelFamily& family, DType dtype) {
  IR_CHECK(std::find(family.dtypes.begin(), family.dtypes.end(), dtype) != family.dtypes.end())
      << "CUDA kernel family '" << family.name << "' has no " << DTypeName(dtype) << " version";
  return StrCat(Prelude(), "/* family ", family.name, " */\ntypedef ", ElementType(dtype), " T;\n", kFamilyHelpers,
                family.body);
}

void LaunchFamily(const KernelFamily& family, DType dtype, const std::string& kernel, KernelArgs* args, int64_t blocks,
                  const OpContext& ctx) {
  if (blocks <= 0) return;
  std::shared_ptr<Launcher> module;
  {
    FamilyRegistry& registry = Registry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    auto key = std::make_pair(family.name, dtype);
    auto it = registry.modules.find(key);
    if (it == registry.modules.end()) {
      auto compiled = KernelCache::Global().GetOrCompile("cuda", FamilySource(family, dtype));
      auto cuda_module = std::dynamic_pointer_cast<Launcher>(compiled);
      IR_CHECK(cuda_module != nullptr) << "the \"cuda\" kernel compiler did not give a CUDA module";
      it = registry.modules.emplace(key, cuda_module).first;
    }
    module = it->second;
  }
  module->LaunchRaw(kernel, args, blocks, ctx);
}

std::string ParamText(const NodeAttrs& attrs, const std::string& key) {
  auto it = attrs.dict.find(key);
  if (it != attrs.dict.end()) return it->second;
  std::string value;
  if (attrs.op != nullptr) {
    for (const ArgumentInfo& arg : attrs.op->arguments) {
      if (arg.name == key && DocumentedDefault(arg.type, &value)) return value;
    }
  }
  throw Error(StrCat(op::NodeDesc(attrs), ": parameter '", key, "' is not set and has no default"));
}

int64_t ParamInt(const NodeAttrs& attrs, const std::string& key) {
  std::string text = ParamText(attrs, key);
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    throw Error(StrCat(op::NodeDesc(attrs), ": parameter '", key, "' = '", text, "' is not an integer"));
  }
}

double ParamDouble(const NodeAttrs& attrs, const std::string& key) {
  std::string text = ParamText(attrs, key);
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    throw Error(StrCat(op::NodeDesc(attrs), ": parameter '", key, "' = '", text, "' is not a number"));
  }
}

bool ParamBool(const NodeAttrs& attrs, const std::string& key) {
  std::string text = ParamText(attrs, key);
  if (text == "1" || text == "true" || text == "True") return true;
  IR_CHECK(text == "0" || text == "false" || text == "False")
      << op::NodeDesc(attrs) << ": parameter '" << key << "' = '" << text << "' is not a boolean";
  return false;
}

op::IntList ParamList(const NodeAttrs& attrs, const std::string& key) {
  std::string text = ParamText(attrs, key);
  std::istringstream is(text);
  op::IntList list;
  is >> list;
  IR_CHECK(!is.fail()) << op::NodeDesc(attrs) << ": parameter '" << key << "' = '" << text
                       << "' is not a list of integers";
  return list;
}

void CopyArray(const NDArray& src, const NDArray& dst) {
  IR_CHECK(src.nbytes() == dst.nbytes()) << "CUDA copy of " << src.nbytes() << " bytes into " << dst.nbytes();
  if (src.storage() == dst.storage() && src.byte_offset() == dst.byte_offset()) return;
  DeviceAPI::Get(dst.device())
      ->CopyWithin(src.handle(), src.byte_offset(), dst.handle(), dst.byte_offset(), src.nbytes());
}

void RunCPUKernel(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<NDArray>& outputs) {
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  std::vector<uint32_t> mutated;
  if (mutate != nullptr && mutate->count(attrs.op)) mutated = (*mutate)[attrs.op](attrs);
  FCompute cpu = codegen::CpuKernelOf(attrs.op);  // FCompute, or derived from FCodeGen
  IR_CHECK(cpu) << "op '" << attrs.op->name << "' (node '" << attrs.name << "') has no CPU kernel to fall back on";
  runtime::RunOnHost(cpu, ctx, attrs, inputs, outputs, mutated);
}

bool MakeStridedDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, StridedDims* out) {
  *out = StridedDims();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (out->ndim == kMaxDims) return false;
    out->dims[out->ndim] = dims[d];
    out->strides[out->ndim] = strides[d];
    ++out->ndim;
  }
  return true;
}

std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.ndim(), 1);
  for (int d = shape.ndim() - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

}  // namespace cuda
}  // namespace ir
