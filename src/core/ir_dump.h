/*!
 * \file ir_dump.h
 * \brief Writing the IR after each pass when IR_DUMP_DIR (or graph attribute "dump_dir") is set.
 */
#ifndef IR_CORE_IR_DUMP_H_
#define IR_CORE_IR_DUMP_H_

#include <string>

#include "ir/graph.h"

namespace ir {
namespace detail {

/*!
 * \brief Writes <dir>/<NNN>_<pass>.txt and .dot when dumping is on and `pass` passes the filter
 * (IR_DUMP_FILTER or graph attribute "dump_filter": comma-separated pass names; empty = all).
 * NNN counts dumps into that directory in this process, so files sort in pipeline order.
 */
void DumpAfterPass(const Graph& graph, const std::string& pass);

}  // namespace detail
}  // namespace ir

#endif  // IR_CORE_IR_DUMP_H_
