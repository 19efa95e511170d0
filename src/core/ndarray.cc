/*!
 * \file ndarray.cc
 * \brief Devices, the DeviceAPI registry, Storage and NDArray views.
 */
#include "ir/ndarray.h"

#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace ir {

const char* DeviceTypeName(DeviceType type) {
  switch (type) {
    case DeviceType::kCPU:
      return "cpu";
    case DeviceType::kCUDA:
      return "cuda";
    case DeviceType::kOpenCL:
      return "opencl";
  }
  return "unknown";
}

Device Device::Parse(const std::string& text) {
  std::string kind = text.substr(0, text.find(':'));
  int id = 0;
  if (kind.size() != text.size()) {
    std::string index = text.substr(kind.size() + 1);
    IR_CHECK(!index.empty() && index.find_first_not_of("0123456789") == std::string::npos)
        << "malformed device '" << text << "' (expected e.g. cpu, opencl:0, cuda:1)";
    id = std::stoi(index);
  }
  for (DeviceType type : {DeviceType::kCPU, DeviceType::kOpenCL, DeviceType::kCUDA}) {
    if (kind == DeviceTypeName(type)) return Device{type, id};
  }
  throw Error(StrCat("unknown device '", text, "' (known: cpu, opencl, cuda)"));
}

std::string Device::ToString() const {
  if (type == DeviceType::kCPU) return "cpu";
  return StrCat(DeviceTypeName(type), ":", id);
}

namespace {

struct DeviceRegistry {
  std::mutex mutex;
  std::map<DeviceType, std::function<DeviceAPI*(int)>> factories;
  std::map<std::pair<int, int>, DeviceAPI*> instances;  // never freed: live for the process
  static DeviceRegistry* Global() {
    static DeviceRegistry* registry = new DeviceRegistry();
    return registry;
  }
};

}  // namespace

void DeviceAPI::Register(DeviceType type, std::function<DeviceAPI*(int id)> factory) {
  DeviceRegistry* reg = DeviceRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  reg->factories[type] = std::move(factory);
}

DeviceAPI* DeviceAPI::Get(Device device) {
  DeviceRegistry* reg = DeviceRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto key = std::make_pair(static_cast<int>(device.type), device.id);
  auto it = reg->instances.find(key);
  if (it != reg->instances.end()) return it->second;
  auto factory = reg->factories.find(device.type);
  IR_CHECK(factory != reg->factories.end()) << "no backend for device '" << device.ToString() << "': this build has no "
                                            << DeviceTypeName(device.type) << " support";
  DeviceAPI* api = factory->second(device.id);  // may throw, e.g. "no OpenCL device"
  reg->instances[key] = api;
  return api;
}

Storage::Storage(size_t bytes, Device device) : bytes_(bytes), device_(device) {
  handle_ = DeviceAPI::Get(device)->Alloc(bytes);
}

std::shared_ptr<Storage> Storage::Borrow(void* data, size_t bytes, Device device) {
  return std::shared_ptr<Storage>(new Storage(data, bytes, device));
}

Storage::~Storage() {
  if (owned_ && handle_ != nullptr) DeviceAPI::Get(device_)->Free(handle_);
}

NDArray::NDArray(const Shape& shape, DType dtype, Device device) : shape_(shape), dtype_(dtype) {
  IR_CHECK(shape.is_known()) << "cannot allocate an array of partially known shape " << shape;
  IR_CHECK(shape.FitsInt64()) << "cannot allocate an array of shape " << shape
                              << ": the product of its dimensions overflows a 64-bit integer";
  const int64_t bytes = shape.Bytes(dtype);
  DeviceAPI::Get(device);  // a missing backend is its own error, not an allocation failure
  // Allocation failures name what was being allocated: no raw std::bad_alloc reaches the user.
  auto fail = [&](const char* reason) {
    return Error(StrCat("cannot allocate ", bytes, " bytes for array of shape ", shape, " dtype ", DTypeName(dtype),
                        " on ", device.ToString(), ": ", reason));
  };
  try {
    storage_ = std::make_shared<Storage>(static_cast<size_t>(bytes), device);
  } catch (const std::bad_alloc&) {
    throw fail("out of memory");
  } catch (const Error& err) {
    throw fail(err.what());
  }
}

NDArray NDArray::FromStorage(std::shared_ptr<Storage> storage, size_t byte_offset, const Shape& shape, DType dtype) {
  IR_CHECK(storage != nullptr) << "NDArray::FromStorage: null storage";
  IR_CHECK(shape.is_known()) << "NDArray::FromStorage: partially known shape " << shape;
  IR_CHECK(shape.FitsInt64()) << "NDArray::FromStorage: shape " << shape << " overflows a 64-bit integer";
  size_t bytes = static_cast<size_t>(shape.Bytes(dtype));
  IR_CHECK(byte_offset <= storage->bytes() && bytes <= storage->bytes() - byte_offset)
      << "NDArray::FromStorage: " << bytes << " bytes at offset " << byte_offset << " do not fit in storage of "
      << storage->bytes() << " bytes";
  NDArray array;
  array.storage_ = std::move(storage);
  array.byte_offset_ = byte_offset;
  array.shape_ = shape;
  array.dtype_ = dtype;
  return array;
}

Device NDArray::device() const {
  IR_CHECK(defined()) << "undefined NDArray";
  return storage_->device();
}

void* NDArray::data() const {
  IR_CHECK(defined()) << "undefined NDArray";
  IR_CHECK(storage_->device().type == DeviceType::kCPU)
      << "host access to an array on " << storage_->device().ToString() << ": copy it to the cpu first";
  return static_cast<char*>(storage_->handle()) + byte_offset_;
}

void* NDArray::handle() const {
  IR_CHECK(defined()) << "undefined NDArray";
  return storage_->handle();
}

NDArray NDArray::Reshape(const Shape& shape) const {
  IR_CHECK(shape.rank_known()) << "reshape to unknown rank";
  std::vector<int64_t> dims = shape.dims();
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      IR_CHECK(infer < 0) << "reshape " << shape_ << " to " << shape << ": more than one -1";
      infer = static_cast<int>(i);
    } else {
      IR_CHECK(CheckedMul(known, dims[i], &known))
          << "cannot reshape " << shape_ << " to " << shape << ": the target overflows a 64-bit integer";
    }
  }
  if (infer >= 0) {
    IR_CHECK(known > 0 && Size() % known == 0) << "cannot reshape " << shape_ << " to " << shape;
    dims[infer] = Size() / known;
  }
  Shape target(dims);
  IR_CHECK(target.Size() == Size()) << "cannot reshape " << shape_ << " (" << Size() << " elements) to " << shape
                                    << " (" << target.Size() << " elements)";
  return FromStorage(storage_, byte_offset_, target, dtype_);
}

NDArray NDArray::Slice(int64_t begin, int64_t end) const {
  IR_CHECK(shape_.ndim() >= 1) << "cannot slice a scalar";
  IR_CHECK(0 <= begin && begin <= end && end <= shape_[0])
      << "slice [" << begin << ", " << end << ") out of range for " << shape_;
  std::vector<int64_t> dims = shape_.dims();
  int64_t row = shape_.ProdDims(1, shape_.ndim());
  dims[0] = end - begin;
  return FromStorage(storage_, byte_offset_ + static_cast<size_t>(begin * row) * DTypeSize(dtype_), Shape(dims),
                     dtype_);
}

NDArray NDArray::CopyTo(Device device) const {
  NDArray out(shape_, dtype_, device);
  out.CopyFrom(*this);
  return out;
}

void NDArray::CopyFrom(const NDArray& src) const {
  IR_CHECK(defined() && src.defined()) << "copy between undefined arrays";
  IR_CHECK(src.shape_ == shape_ && src.dtype_ == dtype_)
      << "copy of " << DTypeName(src.dtype_) << src.shape_ << " into " << DTypeName(dtype_) << shape_;
  size_t bytes = nbytes();
  if (bytes == 0) return;
  Device from = src.device(), to = device();
  if (from.type == DeviceType::kCPU && to.type == DeviceType::kCPU) {
    std::memmove(data(), src.data(), bytes);
  } else if (from.type == DeviceType::kCPU) {
    DeviceAPI::Get(to)->CopyFromHost(src.data(), handle(), byte_offset_, bytes);
  } else if (to.type == DeviceType::kCPU) {
    DeviceAPI::Get(from)->CopyToHost(src.handle(), src.byte_offset_, data(), bytes);
  } else if (from == to) {
    DeviceAPI::Get(to)->CopyWithin(src.handle(), src.byte_offset_, handle(), byte_offset_, bytes);
  } else {
    CopyFrom(src.CopyTo(Device::CPU()));
  }
}

bool NDArray::Overlaps(const NDArray& other) const {
  if (!defined() || !other.defined() || storage_ != other.storage_) return false;
  size_t a0 = byte_offset_, a1 = byte_offset_ + nbytes();
  size_t b0 = other.byte_offset_, b1 = other.byte_offset_ + other.nbytes();
  return a0 < b1 && b0 < a1;
}

}  // namespace ir
