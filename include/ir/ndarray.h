/*!
 * \file ndarray.h
 * \brief Devices, device memory and NDArray (a typed, shaped view of shared storage).
 */
#ifndef IR_NDARRAY_H_
#define IR_NDARRAY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/base.h"

namespace ir {

/*! \brief Kinds of devices. Values are stable. */
enum class DeviceType : int { kCPU = 1, kCUDA = 2, kOpenCL = 4 };

/*! \brief A device: its kind and an index among devices of that kind. */
struct Device {
  DeviceType type = DeviceType::kCPU;
  int id = 0;

  static Device CPU() { return Device{DeviceType::kCPU, 0}; }
  /*! \brief Parses "cpu", "opencl", "opencl:1", "cuda:0"; throws on others. */
  static Device Parse(const std::string& text);
  /*! \brief "cpu", "opencl:0", "cuda:0". */
  std::string ToString() const;
  bool operator==(const Device& o) const { return type == o.type && id == o.id; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

/*! \brief Name of a device type: "cpu", "cuda", "opencl". */
const char* DeviceTypeName(DeviceType type);

/*!
 * \brief Memory management of one kind of device, registered by its backend.
 *
 * Handles are host pointers on the CPU and backend objects elsewhere (cl_mem, CUdeviceptr);
 * offsets are in bytes.
 */
class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;
  virtual void* Alloc(size_t bytes) = 0;
  virtual void Free(void* handle) = 0;
  virtual void CopyToHost(const void* src, size_t src_offset, void* dst, size_t bytes) = 0;
  virtual void CopyFromHost(const void* src, void* dst, size_t dst_offset, size_t bytes) = 0;
  virtual void CopyWithin(const void* src, size_t src_offset, void* dst, size_t dst_offset, size_t bytes) = 0;
  /*! \brief Waits for queued work on the device to finish. */
  virtual void Synchronize() {}

  /*! \brief The API of `device`; throws ir::Error naming the device when no backend serves it. */
  static DeviceAPI* Get(Device device);
  /*! \brief Registers the factory of a device type's API (called once per device id, lazily). */
  static void Register(DeviceType type, std::function<DeviceAPI*(int id)> factory);
};

/*! \brief A block of device memory, freed when the last NDArray using it goes away. */
class Storage {
 public:
  Storage(size_t bytes, Device device);
  /*! \brief Memory the caller owns (never freed here); it must outlive every array using it. */
  static std::shared_ptr<Storage> Borrow(void* data, size_t bytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* handle() const { return handle_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  Storage(void* data, size_t bytes, Device device) : handle_(data), bytes_(bytes), device_(device), owned_(false) {}
  void* handle_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  bool owned_ = true;
};

/*! \brief C++ element type -> DType. */
template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

/*!
 * \brief A tensor: shape and dtype over a byte range of shared storage.
 *
 * Copies share storage. Reshape and Slice (along axis 0) are zero-copy views.
 * Data is row-major and contiguous.
 */
class NDArray {
 public:
  /*! \brief An undefined array (defined() is false). */
  NDArray() = default;
  /*! \brief Allocates an uninitialized array; the shape must be fully known. */
  NDArray(const Shape& shape, DType dtype, Device device = Device::CPU());
  /*! \brief A view of `storage` starting `byte_offset` bytes in; throws if it does not fit. */
  static NDArray FromStorage(std::shared_ptr<Storage> storage, size_t byte_offset, const Shape& shape, DType dtype);
  /*! \brief A CPU array holding `values` (size must match the shape). */
  template <typename T>
  static NDArray FromVector(const Shape& shape, const std::vector<T>& values);
  /*! \brief A CPU scalar. */
  template <typename T>
  static NDArray Scalar(T value) {
    return FromVector<T>(Shape::Scalar(), {value});
  }

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Device device() const;
  int64_t Size() const { return shape_.Size(); }
  size_t nbytes() const { return static_cast<size_t>(Size()) * DTypeSize(dtype_); }
  /*! \brief Host pointer to the first element; throws unless the array is on the CPU. */
  void* data() const;
  /*! \brief Typed host pointer; throws when T does not match dtype(). */
  template <typename T>
  T* data() const;
  /*! \brief The storage's device handle and this view's offset into it (for backends). */
  void* handle() const;
  size_t byte_offset() const { return byte_offset_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  /*! \brief A view with another shape of the same size (one dimension may be -1). */
  NDArray Reshape(const Shape& shape) const;
  /*! \brief A view of rows [begin, end) along axis 0. */
  NDArray Slice(int64_t begin, int64_t end) const;
  /*! \brief A copy on `device`. */
  NDArray CopyTo(Device device) const;
  /*! \brief Copies `src` (same shape and dtype, any device) into this array. */
  void CopyFrom(const NDArray& src) const;
  /*! \brief The elements as a host vector of T (dtype must match). */
  template <typename T>
  std::vector<T> ToVector() const;
  /*! \brief True when both views overlap in the same storage. */
  bool Overlaps(const NDArray& other) const;

 private:
  std::shared_ptr<Storage> storage_;
  size_t byte_offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::kUnknown;
};

template <typename T>
NDArray NDArray::FromVector(const Shape& shape, const std::vector<T>& values) {
  NDArray array(shape, DTypeOf<T>::value);
  IR_CHECK(static_cast<int64_t>(values.size()) == array.Size())
      << "NDArray::FromVector: " << values.size() << " values for shape " << shape;
  T* out = array.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return array;
}

template <typename T>
T* NDArray::data() const {
  IR_CHECK(dtype_ == DTypeOf<T>::value) << "NDArray holds " << DTypeName(dtype_) << ", accessed as "
                                        << DTypeName(DTypeOf<T>::value);
  return static_cast<T*>(data());
}

template <typename T>
std::vector<T> NDArray::ToVector() const {
  NDArray host = device() == Device::CPU() ? *this : CopyTo(Device::CPU());
  const T* begin = host.data<T>();
  return std::vector<T>(begin, begin + host.Size());
}

}  // namespace ir

#endif  // IR_NDARRAY_H_
