/*!
 * \file fuzz_saved_model.h
 * \brief What the SavedModel fuzz target (and the test replaying its corpus) does with one input:
 * load it as a directory's `saved_model.pb` (the meta graph, its signature, the object graph's
 * variable keys), then import the graph (the function library admitted and inlined, functional
 * control flow's bodies imported, constants capped at 1 MiB) and infer shapes and types.
 * ir::Error is the expected outcome for bad input; anything else is a bug.
 */
#ifndef IR_TF_FUZZ_SAVED_MODEL_H_
#define IR_TF_FUZZ_SAVED_MODEL_H_

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_files.h"
#include "fuzz_model.h"
#include "ir_tf/model.h"

namespace ir {
namespace tf {

/*! \brief Loads and imports the SavedModel `data`; "" when it imported, else the error. */
inline std::string FuzzSavedModel(const std::string& data) {
  FuzzScratch::Write("saved_model.pb", data);
  try {
    TFModel model = LoadModel(FuzzScratch::Dir());
    ListUnsupported(model.graph_def);
    ImportOptions options = FuzzImportOptions();
    for (const auto& kv : model.signature_outputs) options.outputs.push_back(kv.second);
    // Each signature input fed as a batch of one (its unknown dimensions 1), as a caller would.
    for (const auto& kv : model.signature_inputs) {
      Shape shape = FindInputSpec(model, kv.first).shape;
      if (!shape.rank_known() || shape.ndim() > 8) continue;
      std::vector<int64_t> dims = shape.dims();
      for (int64_t& d : dims) d = d < 0 ? 1 : std::min<int64_t>(d, 64);
      options.feed_shapes[kv.second.substr(0, kv.second.find(':'))] = Shape(dims);
    }
    FuzzImport(model, options);
    return "";
  } catch (const Error& err) {
    return err.what();
  }
}

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUZZ_SAVED_MODEL_H_
