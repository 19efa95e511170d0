/*!
 * \file arena_offsets.h
 * \brief Offsets of buffers in one arena so that buffers live at the same time never share
 * bytes (PlanMemory's offset planning).
 */
#ifndef IR_PASSES_ARENA_OFFSETS_H_
#define IR_PASSES_ARENA_OFFSETS_H_

#include <cstdint>
#include <vector>

namespace ir {

/*! \brief A buffer to place: its bytes and the steps (inclusive) it is live over. */
struct LiveBuffer {
  int64_t bytes = 0;
  uint32_t first = 0, last = 0;
};

/*! \brief Offsets of buffers in an arena, and the arena's bytes. */
struct ArenaLayout {
  std::vector<int64_t> offsets;
  int64_t bytes = 0;
};

/*!
 * \brief Greedy-by-size placement (Pisarchyk & Lee 2020, as in TFLite): largest buffer first,
 * each into the smallest gap between the already placed buffers it overlaps in time that fits,
 * else above them all. Offsets are multiples of `align`.
 */
ArenaLayout GreedyBySizeOffsets(const std::vector<LiveBuffer>& buffers, int64_t align);

}  // namespace ir

#endif  // IR_PASSES_ARENA_OFFSETS_H_
