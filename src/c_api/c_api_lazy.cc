/*!
 * \file c_api_lazy.cc
 * \brief C API: lazy arrays (eager mode), their Contexts and gradient tapes (include/ir/lazy.h).
 *
 * A lazy handle is a heap ir::lazy::Array: copies (IRLazyCopy) share its cell, so an assignment
 * through one is seen through every copy, as with a tf.Variable held by several Python objects.
 */
#include <cstring>
#include <memory>
#include <sstream>

#include "c_api/c_api_common.h"
#include "ir/lazy.h"
#include "ir/lazy_tape.h"
#include "ir/node.h"
#include "ir/op.h"
#include "ir/runtime.h"

using ir::DType;
using ir::NDArray;
using ir::capi::DTypeFromInt;
using ir::lazy::Array;
using ir::lazy::Context;
using ir::lazy::GradientTape;

namespace {

Array& AsLazy(IRLazyHandle handle) {
  IR_CHECK(handle != nullptr) << "null lazy array handle";
  return *static_cast<Array*>(handle);
}

/*! \brief The Context named by a handle, or the current one for NULL. */
Context& ContextOf(IRLazyContextHandle handle) {
  return handle != nullptr ? *static_cast<Context*>(handle) : Context::Current();
}

/*!
 * \brief The Scope that IRLazyContextSetCurrent holds open on this thread. C has no scopes:
 * setting another context closes this one (back to the default) before opening the next.
 */
std::unique_ptr<Context::Scope>& CurrentScope() {
  thread_local std::unique_ptr<Context::Scope> scope;
  return scope;
}

std::vector<Array> LazyArrays(IRLazyHandle* handles, uint32_t count) {
  std::vector<Array> arrays;
  arrays.reserve(count);
  for (uint32_t i = 0; i < count; ++i) arrays.push_back(AsLazy(handles[i]));
  return arrays;
}

/*! \brief How many outputs `op` has with `attrs` (as a symbol of that op would have). */
uint32_t OutputCount(const ir::Op* op, const std::map<std::string, std::string>& attrs) {
  if (!op->get_num_outputs) return op->num_outputs;
  ir::NodePtr node = ir::Node::Create();
  node->attrs.op = op;
  node->attrs.name = op->name;
  node->attrs.dict = attrs;
  node->ReparseAttrs();
  return node->num_outputs();
}

std::string StatsJSON(const Context& context) {
  const ir::lazy::Stats& s = context.stats();
  std::ostringstream os;
  os << "{\"kernels_launched\": " << s.kernels_launched << ", \"traces_compiled\": " << s.traces_compiled
     << ", \"cache_hits\": " << s.cache_hits << ", \"cache_misses\": " << s.cache_misses
     << ", \"cache_size\": " << context.cache_size() << ", \"evictions\": " << s.evictions
     << ", \"ops_recorded\": " << s.ops_recorded << ", \"record_ns\": " << s.record_ns
     << ", \"execute_ns\": " << s.execute_ns << ", \"tape_cache_hits\": " << s.tape_cache_hits
     << ", \"tape_cache_misses\": " << s.tape_cache_misses << "}";
  return os.str();
}

}  // namespace

int IRLazyContextCreate(const char* options_json, IRLazyContextHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  *out = new Context(ir::capi::ParseSessionOptions(options_json));
  IR_API_END();
}

int IRLazyContextFree(IRLazyContextHandle context) {
  IR_API_BEGIN();
  if (context != nullptr && &Context::Current() == context) CurrentScope().reset();
  delete static_cast<Context*>(context);
  IR_API_END();
}

int IRLazyContextSetCurrent(IRLazyContextHandle context) {
  IR_API_BEGIN();
  CurrentScope().reset();
  if (context != nullptr) CurrentScope() = std::make_unique<Context::Scope>(static_cast<Context*>(context));
  IR_API_END();
}

int IRLazyContextGetStatsJSON(IRLazyContextHandle context, const char** json) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(json);
  auto* buf = ir::capi::ThreadReturnBuffer();
  buf->str = StatsJSON(ContextOf(context));
  *json = buf->str.c_str();
  IR_API_END();
}

int IRLazyContextResetStats(IRLazyContextHandle context) {
  IR_API_BEGIN();
  ContextOf(context).ResetStats();
  IR_API_END();
}

int IRLazyFromNDArray(IRNDArrayHandle value, IRLazyHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(value);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Array(*static_cast<NDArray*>(value));
  IR_API_END();
}

int IRLazyFromHost(const void* data, int ndim, const int64_t* shape, int dtype, IRLazyHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  IR_CHECK(ndim >= 0) << "IRLazyFromHost: negative ndim " << ndim;
  IR_API_CHECK_NOT_NULL_IF(shape, ndim);
  std::vector<int64_t> dims(shape, shape + ndim);
  for (int64_t d : dims) IR_CHECK(d >= 0) << "IRLazyFromHost: negative dimension in " << ir::Shape(dims);
  NDArray value(ir::Shape(dims), DTypeFromInt(dtype));
  IR_API_CHECK_NOT_NULL_IF(data, value.nbytes());
  if (value.nbytes() != 0) std::memcpy(value.data(), data, value.nbytes());
  *out = new Array(std::move(value));
  IR_API_END();
}

int IRLazyScalar(double value, int dtype, IRLazyHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  *out = new Array(Array::Scalar(value, DTypeFromInt(dtype)));
  IR_API_END();
}

int IRLazyApply(IROpHandle op, uint32_t num_attrs, const char** keys, const char** vals, uint32_t num_inputs,
                IRLazyHandle* inputs, uint32_t* num_outputs, IRLazyHandle** outputs) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(op);
  IR_API_CHECK_ARRAY(keys, num_attrs);
  IR_API_CHECK_ARRAY(vals, num_attrs);
  IR_API_CHECK_ARRAY(inputs, num_inputs);
  IR_API_CHECK_NOT_NULL(num_outputs);
  IR_API_CHECK_NOT_NULL(outputs);
  const auto* o = static_cast<const ir::Op*>(op);
  static const std::map<std::string, std::string> kNoAttrs;
  std::map<std::string, std::string> parsed;
  for (uint32_t i = 0; i < num_attrs; ++i) parsed[keys[i]] = vals[i];
  const auto& attrs = num_attrs == 0 ? kNoAttrs : parsed;
  constexpr uint32_t kSmall = 8;  // the inputs are read where they are: no copy of the arrays, no vector for few
  const Array* small[kSmall];
  std::vector<const Array*> large(num_inputs > kSmall ? num_inputs : 0);
  const Array** arrays = num_inputs > kSmall ? large.data() : small;
  for (uint32_t i = 0; i < num_inputs; ++i) arrays[i] = &AsLazy(inputs[i]);
  std::vector<Array> results = ir::lazy::ApplyN(o, arrays, num_inputs, attrs, OutputCount(o, attrs));
  static thread_local std::vector<IRLazyHandle> handles;
  handles.clear();
  for (Array& r : results) handles.push_back(new Array(std::move(r)));
  *num_outputs = static_cast<uint32_t>(handles.size());
  *outputs = handles.data();
  IR_API_END();
}

int IRLazyCopy(IRLazyHandle array, IRLazyHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Array(AsLazy(array));
  IR_API_END();
}

int IRLazyFree(IRLazyHandle array) {
  IR_API_BEGIN();
  delete static_cast<Array*>(array);
  IR_API_END();
}

int IRLazyIsPending(IRLazyHandle array, int* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(out);
  *out = AsLazy(array).is_pending() ? 1 : 0;
  IR_API_END();
}

int IRLazyGetShape(IRLazyHandle array, int* ndim, const int64_t** shape) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(ndim);
  IR_API_CHECK_NOT_NULL(shape);
  static thread_local std::vector<int64_t> dims;
  dims = ir::lazy::ShapeOf(AsLazy(array)).dims();
  *ndim = static_cast<int>(dims.size());
  *shape = dims.data();
  IR_API_END();
}

int IRLazyGetDType(IRLazyHandle array, int* dtype) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(dtype);
  *dtype = static_cast<int>(ir::lazy::DTypeOf(AsLazy(array)));
  IR_API_END();
}

int IRLazyMaterialize(uint32_t num_arrays, IRLazyHandle* arrays) {
  IR_API_BEGIN();
  IR_API_CHECK_ARRAY(arrays, num_arrays);
  ir::lazy::Materialize(LazyArrays(arrays, num_arrays));
  IR_API_END();
}

int IRLazyToNDArray(IRLazyHandle array, IRNDArrayHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(out);
  *out = new NDArray(AsLazy(array).Eval());
  IR_API_END();
}

int IRLazyReadValue(IRLazyHandle array, IRNDArrayHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(array);
  IR_API_CHECK_NOT_NULL(out);
  *out = new NDArray(ir::lazy::ReadValue(AsLazy(array)));
  IR_API_END();
}

int IRLazyAssign(uint32_t num, IRLazyHandle* targets, IRLazyHandle* values) {
  IR_API_BEGIN();
  IR_API_CHECK_ARRAY(targets, num);
  IR_API_CHECK_ARRAY(values, num);
  ir::lazy::AssignAll(LazyArrays(targets, num), LazyArrays(values, num));
  IR_API_END();
}

int IRLazyAssignUpdate(uint32_t num, IRLazyHandle* targets, IRLazyHandle* values, int op) {
  IR_API_BEGIN();
  IR_API_CHECK_ARRAY(targets, num);
  IR_API_CHECK_ARRAY(values, num);
  IR_CHECK(op >= 0 && op <= static_cast<int>(ir::lazy::Update::kMultiply)) << "IRLazyAssignUpdate: unknown op " << op;
  ir::lazy::AssignAll(LazyArrays(targets, num), LazyArrays(values, num), static_cast<ir::lazy::Update>(op));
  IR_API_END();
}

int IRLazyTapeCreate(int persistent, IRLazyTapeHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out);
  *out = new GradientTape(persistent != 0);
  IR_API_END();
}

int IRLazyTapeWatch(IRLazyTapeHandle tape, IRLazyHandle array) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(tape);
  IR_API_CHECK_NOT_NULL(array);
  static_cast<GradientTape*>(tape)->Watch(AsLazy(array));
  IR_API_END();
}

int IRLazyTapeStop(IRLazyTapeHandle tape) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(tape);
  static_cast<GradientTape*>(tape)->Stop();
  IR_API_END();
}

int IRLazyTapeGradient(IRLazyTapeHandle tape, uint32_t num_targets, IRLazyHandle* targets, IRLazyHandle* heads,
                       uint32_t num_sources, IRLazyHandle* sources, IRLazyHandle* out_grads) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(tape);
  IR_API_CHECK_ARRAY(targets, num_targets);
  IR_API_CHECK_ARRAY(sources, num_sources);
  IR_API_CHECK_NOT_NULL_IF(out_grads, num_sources);
  std::vector<Array> ys = LazyArrays(targets, num_targets), dys;
  // heads NULL, or a NULL entry in it: ones of that target's shape (TF's default output gradient).
  for (uint32_t i = 0; heads != nullptr && i < num_targets; ++i) {
    dys.push_back(heads[i] != nullptr ? AsLazy(heads[i]) : ir::lazy::Apply("ones_like", {ys[i]}));
  }
  std::vector<Array> grads = static_cast<GradientTape*>(tape)->Gradient(ys, LazyArrays(sources, num_sources), dys);
  for (uint32_t i = 0; i < num_sources; ++i)
    out_grads[i] = grads[i].defined() ? new Array(std::move(grads[i])) : nullptr;
  IR_API_END();
}

int IRLazyTapeFree(IRLazyTapeHandle tape) {
  IR_API_BEGIN();
  delete static_cast<GradientTape*>(tape);
  IR_API_END();
}
