/*!
 * \file lazy_example.cc
 * \brief Imperative code on lazy arrays (include/ir/lazy.h): SGD steps of a linear model, each
 * recorded op by op, differentiated by a GradientTape (include/ir/lazy_tape.h) and run as one
 * fused, cached trace per step (forward, backward and the in-place update of w; the loss the step
 * holds is computed in that trace, no second forward); shapes known without computing; the stats.
 *
 * Usage: ir-lazy-example
 */
#include <iostream>

#include "ir/lazy.h"
#include "ir/lazy_tape.h"

namespace {

/*! \brief A float32 array of `shape` holding sin-like deterministic values. */
ir::NDArray Data(const ir::Shape& shape, int seed) {
  ir::NDArray out(shape, ir::DType::kFloat32);
  float* data = out.data<float>();
  for (int64_t i = 0; i < out.Size(); ++i) data[i] = static_cast<float>((i * 7 + seed * 13) % 17) / 17.0f - 0.5f;
  return out;
}

}  // namespace

int main() {
  using ir::lazy::Array;
  try {
    Array w(Data({8, 1}, 0));
    Array w_true(Data({8, 1}, 1));
    for (int step = 0; step < 50; ++step) {
      Array x(Data({32, 8}, step));  // fresh data each step: same shapes, same cached trace
      Array y = ir::lazy::matmul(x, w_true);
      ir::lazy::GradientTape tape;
      tape.Watch(w);
      Array err = ir::lazy::matmul(x, w) - y;
      Array loss = ir::lazy::mean(err * err);  // held: computed by the update's trace below
      tape.Stop();
      Array grad = tape.Gradient({loss}, {w})[0];  // pending: the backward pass fuses with the update
      // A decaying learning rate: a 0-d parameter of the trace, not part of its key.
      Array lr = Array::Scalar(0.25 / (1.0 + 0.02 * step), ir::DType::kFloat32);
      w -= lr * grad;
      if (step % 10 == 0) std::cout << "step " << step << " loss " << loss.Eval().ToVector<float>()[0] << "\n";
    }
    Array x(Data({4}, 3));
    Array batch = ir::lazy::matmul(Array(Data({5, 8}, 2)), w);
    std::cout << "shape of a pending matmul: " << ir::lazy::ShapeOf(batch) << " (nothing computed)\n";
    std::cout << "sigmoid(x)[0] = " << (1.0f / (1.0f + ir::lazy::exp(-x))).Eval().ToVector<float>()[0] << "\n";
    const ir::lazy::Stats& stats = ir::lazy::Context::Current().stats();
    std::cout << "ops recorded " << stats.ops_recorded << ", kernels launched " << stats.kernels_launched
              << ", traces compiled " << stats.traces_compiled << ", cache hits " << stats.cache_hits << ", misses "
              << stats.cache_misses << ", recording " << stats.record_ns / 1000 << " us, executing "
              << stats.execute_ns / 1000 << " us\n";
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
