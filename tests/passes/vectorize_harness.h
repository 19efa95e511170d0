/*!
 * \file vectorize_harness.h
 * \brief Checks a pfor body against the loop: for every combination of stacked (a row per
 * iteration) and unstacked (loop-invariant) inputs, the vectorized graph's results equal the loop's
 * (the pfor kernel, run without the Vectorize pass), and no node fell back to a loop.
 */
#ifndef IR_TESTS_PASSES_VECTORIZE_HARNESS_H_
#define IR_TESTS_PASSES_VECTORIZE_HARNESS_H_

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/node.h"
#include "ir/runtime.h"
#include "ir/vectorize.h"
#include "ops/op_common.h"

namespace ir {
namespace pfor_test {

/*! \brief One input of the body: its per-iteration shape, dtype and value range [lo, hi). */
struct Arg {
  Shape shape;
  DType dtype = DType::kFloat32;
  double lo = -1;
  double hi = 1;
};

using Body = std::function<std::vector<NodeEntry>(const std::vector<NodeEntry>& args)>;

inline NodeEntry Op(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
                    std::map<std::string, std::string> attrs = {}) {
  return MakeNode(op, name, std::move(in), attrs);
}

/*! \brief Random values of `shape` in [lo, hi) (integers for integer dtypes). */
inline NDArray RandomArray(const Shape& shape, DType dtype, double lo, double hi, std::mt19937* rng) {
  std::uniform_real_distribution<double> dist(lo, hi);
  NDArray a(shape, dtype);
  IR_ALL_TYPES_SWITCH(dtype, DT, {
    DT* p = a.data<DT>();
    for (int64_t i = 0; i < a.Size(); ++i) {
      double v = dist(*rng);
      p[i] = static_cast<DT>(std::is_integral<DT>::value ? std::floor(v) : v);
    }
  });
  return a;
}

inline std::vector<double> AsDoubles(const NDArray& a) {
  std::vector<double> out(a.Size());
  IR_ALL_TYPES_SWITCH(a.dtype(), DT, {
    const DT* p = a.data<DT>();
    for (int64_t i = 0; i < a.Size(); ++i) out[i] = static_cast<double>(p[i]);
  });
  return out;
}

/*! \brief Options of ExpectLikeLoop. */
struct Check {
  int64_t n = 3;
  double rtol = 1e-5;
  double atol = 1e-5;
  /*! \brief Whether the vectorized graph may keep fallback loops (false: none allowed). */
  bool allow_fallbacks = false;
  /*! \brief Combinations to try as bit masks of stacked inputs; empty: all of them. */
  std::vector<unsigned> masks;
  bool fusion = true;
};

/*! \brief Runs the pfor of `body` over inputs given by `mask`, looped or vectorized. */
inline std::vector<NDArray> RunPfor(const std::vector<Arg>& args, const Body& body, unsigned mask,
                                    const std::vector<NDArray>& feeds, bool vectorize, const Check& check,
                                    std::vector<std::string>* fallbacks) {
  std::vector<NodeEntry> xs;
  std::map<std::string, NDArray> feed_map;
  for (size_t k = 0; k < args.size(); ++k) {
    std::string name = "x" + std::to_string(k);
    xs.push_back(NodeEntry{Node::CreateVariable(name), 0});
  }
  std::vector<NodeEntry> outs = Pfor(check.n, [&](const NodeEntry& i) {
    std::vector<NodeEntry> in;
    for (size_t k = 0; k < args.size(); ++k) {
      in.push_back((mask >> k) & 1 ? Op("gather", "row" + std::to_string(k), {xs[k], i}) : xs[k]);
    }
    return body(in);
  });
  SessionOptions options;
  options.fusion = check.fusion;
  if (!vectorize) options.passes = {"InferShape", "InferType", "PlanMemory"};
  Session sess(options);
  std::unordered_map<std::string, NDArray> fd;
  for (size_t k = 0; k < args.size(); ++k) fd["x" + std::to_string(k)] = feeds[k];
  std::vector<NDArray> result = sess.Run(outs, fd);
  if (fallbacks) *fallbacks = sess.last_stats().pfor_fallbacks;
  return result;
}

/*! \brief Expects the vectorized pfor of `body` to equal its loop for every stacked/unstacked mix. */
inline void ExpectLikeLoop(const std::string& what, const std::vector<Arg>& args, const Body& body,
                           const Check& check = Check()) {
  std::vector<unsigned> masks = check.masks;
  if (masks.empty()) {
    for (unsigned m = 0; m < (1u << args.size()); ++m) masks.push_back(m);
  }
  std::mt19937 rng(1234);
  for (unsigned mask : masks) {
    SCOPED_TRACE(what + ", stacked inputs mask " + std::to_string(mask));
    std::vector<NDArray> feeds;
    for (size_t k = 0; k < args.size(); ++k) {
      Shape shape = args[k].shape;
      if ((mask >> k) & 1) {
        std::vector<int64_t> dims{check.n};
        dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
        shape = Shape(dims);
      }
      feeds.push_back(RandomArray(shape, args[k].dtype, args[k].lo, args[k].hi, &rng));
    }
    std::vector<std::string> fallbacks;
    std::vector<NDArray> loop, vec;
    try {
      loop = RunPfor(args, body, mask, feeds, false, check, nullptr);
      vec = RunPfor(args, body, mask, feeds, true, check, &fallbacks);
    } catch (const Error& err) {
      ADD_FAILURE() << err.what();
      continue;
    }
    if (!check.allow_fallbacks) {
      std::string list;
      for (const std::string& f : fallbacks) list += f + "; ";
      EXPECT_TRUE(fallbacks.empty()) << "fallback loops: " << list;
    }
    ASSERT_EQ(loop.size(), vec.size());
    for (size_t j = 0; j < loop.size(); ++j) {
      ASSERT_EQ(loop[j].shape(), vec[j].shape()) << "output " << j;
      ASSERT_EQ(loop[j].dtype(), vec[j].dtype()) << "output " << j;
      std::vector<double> a = AsDoubles(loop[j]), b = AsDoubles(vec[j]);
      int bad = 0;
      for (size_t e = 0; e < a.size() && bad < 5; ++e) {
        bool same = (std::isnan(a[e]) && std::isnan(b[e])) || a[e] == b[e] ||
                    std::fabs(a[e] - b[e]) <= check.atol + check.rtol * std::fabs(a[e]);
        if (!same) {
          ++bad;
          ADD_FAILURE() << "output " << j << " element " << e << ": loop " << a[e] << ", vectorized " << b[e];
        }
      }
    }
  }
}

}  // namespace pfor_test
}  // namespace ir

#endif  // IR_TESTS_PASSES_VECTORIZE_HARNESS_H_
