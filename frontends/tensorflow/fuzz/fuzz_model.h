/*!
 * \file fuzz_model.h
 * \brief What the fuzz targets (and the test replaying their findings) do with one input:
 * parse it as a GraphDef, import it, infer shapes and types. ir::Error is the expected
 * outcome for bad input; anything else (a crash, another exception, a hang) is a bug.
 */
#ifndef IR_TF_FUZZ_MODEL_H_
#define IR_TF_FUZZ_MODEL_H_

#include <string>

#include "ir/pass.h"
#include "ir_tf/import.h"
#include "ir_tf/model.h"

namespace ir {
namespace tf {

/*! \brief The import options of every fuzz target: constants capped at 1 MiB (hostile files may declare huge ones). */
inline ImportOptions FuzzImportOptions() {
  ImportOptions options;
  options.max_const_bytes = 1 << 20;
  return options;
}

/*! \brief What every fuzz target ends with: imports `model`'s graph and infers shapes and types. */
inline void FuzzImport(const TFModel& model, const ImportOptions& options) {
  Graph graph = ImportGraphDef(model.graph_def, options);
  ApplyPasses(graph, {"InferShape", "InferType"});
}

/*! \brief Loads and imports `data` (text format when `text`); returns "" when it imported, else the error. */
inline std::string FuzzModel(const std::string& data, bool text) {
  try {
    FuzzImport(text ? ModelFromText(data, "fuzz.pbtxt") : ModelFromBinary(data, "fuzz.pb"), FuzzImportOptions());
    return "";
  } catch (const Error& err) {
    return err.what();
  }
}

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUZZ_MODEL_H_
