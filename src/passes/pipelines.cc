/*!
 * \file pipelines.cc
 * \brief The standard pass pipelines (include/ir/pipeline.h), beside the passes they list.
 */
#include "ir/pipeline.h"

namespace ir {

/*!
 * The pipeline a Session binds a graph with (unless SessionOptions::passes names its own):
 * "simplify" and "fusion" are the SessionOptions flags; the fusion passes run when registered.
 */
IR_REGISTER_PIPELINE(session, {{"InferShape"},
                               {"InferType"},
                               {"Vectorize"},
                               {"Simplify", "simplify"},
                               {"ScheduleCollectives"},
                               {"Fusion", "fusion", true},
                               {"CodeGen", "fusion", true},
                               {"RTCGen", "fusion", true},
                               {"PlanMemory"}});

/*! \brief Shapes and dtypes only (tinyflow's probes of an op's outputs). */
IR_REGISTER_PIPELINE(infer, {{"InferShape"}, {"InferType"}});

/*! \brief Shapes, dtypes and constant folding: what importers and control-flow bodies fold with. */
IR_REGISTER_PIPELINE(fold_constants, {{"InferShape"}, {"InferType"}, {"FoldConstants"}});

}  // namespace ir
