/*!
 * \file timeline.h
 * \brief The engine's timeline: opening a Chrome-trace file for this rank, recording spans
 * (what include/ir/collective.h's TimelineRecord and friends run), writing it out atomically.
 */
#ifndef IR_RUNTIME_COLLECTIVE_TIMELINE_H_
#define IR_RUNTIME_COLLECTIVE_TIMELINE_H_

#include <string>

namespace ir {
namespace collective {
namespace detail {

/*!
 * \brief Starts recording into `path` (events of process `rank`): "" reads IR_TIMELINE, and
 * with neither nothing is recorded. A rank above 0 writes to "<path>.<rank>" unless the name
 * holds "%r" (replaced by the rank). The file is also written at process exit.
 */
void TimelineOpen(const std::string& path, int rank);
/*! \brief Writes what was recorded (temporary file, then rename) and stops recording. */
void TimelineClose();
/*! \brief The timeline's clock, whether one is open, and a span recorded on it (ir/collective.h). */
double Microseconds();
bool TimelineEnabled();
void TimelineRecord(const std::string& name, const std::string& category, double begin_us, double end_us);

}  // namespace detail
}  // namespace collective
}  // namespace ir

#endif  // IR_RUNTIME_COLLECTIVE_TIMELINE_H_
