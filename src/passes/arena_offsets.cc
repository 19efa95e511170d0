/*!
 * \file arena_offsets.cc
 * \brief Greedy-by-size arena offsets for PlanMemory.
 */
#include "passes/arena_offsets.h"

#include <algorithm>
#include <numeric>

namespace ir {
namespace {

int64_t RoundUp(int64_t bytes, int64_t align) { return (bytes + align - 1) / align * align; }

bool LiveTogether(const LiveBuffer& a, const LiveBuffer& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

ArenaLayout GreedyBySizeOffsets(const std::vector<LiveBuffer>& buffers, int64_t align) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  ArenaLayout layout{std::vector<int64_t>(buffers.size(), -1), 0};
  std::vector<size_t> placed;  // by offset
  for (size_t b : order) {
    int64_t size = RoundUp(buffers[b].bytes, align);
    int64_t best = -1, best_gap = 0, end = 0;
    for (size_t p : placed) {
      if (!LiveTogether(buffers[b], buffers[p])) continue;
      int64_t gap = layout.offsets[p] - end;
      if (gap >= size && (best < 0 || gap < best_gap)) best = end, best_gap = gap;
      end = std::max(end, layout.offsets[p] + RoundUp(buffers[p].bytes, align));
    }
    layout.offsets[b] = best >= 0 ? best : end;
    layout.bytes = std::max(layout.bytes, layout.offsets[b] + buffers[b].bytes);
    auto at = std::upper_bound(placed.begin(), placed.end(), layout.offsets[b],
                               [&](int64_t offset, size_t p) { return offset < layout.offsets[p]; });
    placed.insert(at, b);
  }
  return layout;
}

}  // namespace ir
