/*!
 * \file host_callback.h
 * \brief Host callbacks: functions of the embedding program (a Python function behind
 * tf.py_func or tf.print) that host_callback nodes call with their inputs when they run.
 */
#ifndef IR_HOST_CALLBACK_H_
#define IR_HOST_CALLBACK_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/ndarray.h"

namespace ir {

/*! \brief Computes `num_outputs` host arrays from host `inputs`; throws Error to fail the run. */
using HostCallback = std::function<std::vector<NDArray>(const std::vector<NDArray>& inputs, uint32_t num_outputs)>;

/*! \brief Registers `fn` (thread-safe); returns its id, the host_callback op's `callback` attribute. */
int64_t RegisterHostCallback(HostCallback fn);

/*! \brief The callback registered as `id`; throws naming the id when there is none. */
HostCallback FindHostCallback(int64_t id);

}  // namespace ir

#endif  // IR_HOST_CALLBACK_H_
