/*!
 * \file op_attr_types.cc
 * \brief Names of op patterns, and the graph attribute keys the core itself reads.
 */
#include "ir/op_attr_types.h"

#include "ir/graph_attr.h"

namespace ir {

const char* OpPatternName(int pattern) {
  switch (pattern) {
    case kElemWise:
      return "elemwise";
    case kBroadcast:
      return "broadcast";
    case kInjective:
      return "injective";
    case kCommReduce:
      return "reduce";
    case kOutEWiseFusable:
      return "out_elemwise_fusable";
    case kOpaque:
      return "opaque";
    default:
      return "unknown";
  }
}

IR_REGISTER_GRAPH_ATTR("shape")
    .describe("Shape of every entry (InferShape); unknown dimensions are -1.")
    .set_index(AttrIndex::kEntry)
    .set_type<ShapeVector>();
IR_REGISTER_GRAPH_ATTR("dtype")
    .describe("Element type of every entry (InferType).")
    .set_index(AttrIndex::kEntry)
    .set_type<DTypeVector>();
IR_REGISTER_GRAPH_ATTR("dump_dir")
    .describe("Option: directory for IR dumps after each pass (overrides IR_DUMP_DIR).")
    .set_type<std::string>()
    .set_in_dump(false);
IR_REGISTER_GRAPH_ATTR("dump_filter")
    .describe("Option: comma-separated pass names to dump (overrides IR_DUMP_FILTER); empty = all.")
    .set_type<std::string>()
    .set_in_dump(false);

}  // namespace ir
