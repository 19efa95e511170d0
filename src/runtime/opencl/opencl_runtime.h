/*!
 * \file opencl_runtime.h
 * \brief The OpenCL backend's view of its devices: platform/device selection, one context and
 * one in-order command queue per device, and error checking of OpenCL calls.
 *
 * Device opencl:0 is $IR_OPENCL_DEVICE ("platform:device" indices) when set, else the first
 * GPU of any platform, else the first device; opencl:k (k > 0) are the other devices in
 * platform order. Devices live for the whole process.
 */
#ifndef IR_RUNTIME_OPENCL_OPENCL_RUNTIME_H_
#define IR_RUNTIME_OPENCL_OPENCL_RUNTIME_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

#include "ir/base.h"

namespace ir {
namespace opencl {

/*! \brief One OpenCL device with its context and in-order queue. */
struct CLDevice {
  int id = 0;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string platform_name;
  std::string name;
  std::string driver_version;
  std::string version;
  /*! \brief cl_khr_fp64 (or OpenCL 1.2 core double support) is available. */
  bool fp64 = false;
  /*! \brief Division and sqrt of float are correctly rounded when asked (-cl-fp32-correctly-rounded-divide-sqrt). */
  bool correctly_rounded_sqrt = false;
  size_t max_work_group_size = 1;
  /*! \brief About how many work-items run at once: compute units times the work-items each keeps in flight. */
  int64_t concurrent_work_items = 1;

  /*! \brief "Portable Computing Language / pthread-... (driver 3.1)", for messages and cache keys. */
  std::string Describe() const;
};

/*!
 * \brief The device `opencl:<id>`, created on first use.
 * \throws ir::Error "no OpenCL platform/device found" when there is none, or naming the
 *         available devices when `id` or $IR_OPENCL_DEVICE does not exist.
 */
const CLDevice& GetDevice(int id);

/*! \brief "CL_OUT_OF_RESOURCES (-5)". */
std::string ErrorName(cl_int code);

/*! \brief Throws ir::Error "OpenCL error CL_... (code) in <what>" unless `code` is CL_SUCCESS. */
inline void Check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) throw Error(StrCat("OpenCL error ", ErrorName(code), " in ", what));
}

/*! \brief The queue kernels of `device` run on: `queue` (OpContext::queue) when set, else the device's. */
inline cl_command_queue QueueOf(const CLDevice& device, void* queue) {
  return queue != nullptr ? static_cast<cl_command_queue>(queue) : device.queue;
}

}  // namespace opencl
}  // namespace ir

#endif  // IR_RUNTIME_OPENCL_OPENCL_RUNTIME_H_
