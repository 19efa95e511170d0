/*!
 * \file model.h
 * \brief Reading TensorFlow models from disk: GraphDefs (.pb binary, .pbtxt text), MetaGraphs
 * (.meta) and SavedModel directories, into a TFModel that the importer and TFSession use.
 */
#ifndef IR_TF_MODEL_H_
#define IR_TF_MODEL_H_

#include <map>
#include <string>
#include <vector>

#include "ir/base.h"

namespace ir {
namespace tf {

/*! \brief A TensorFlow model as read from disk, before import. */
struct TFModel {
  /*! \brief Where it came from and how it was encoded: "pb", "pbtxt", "meta" or "saved_model". */
  std::string path;
  std::string format;
  /*! \brief The GraphDef, as binary protobuf (what the TFImport pass reads). */
  std::string graph_def;
  /*! \brief The chosen signature's name and its inputs and outputs: key -> tensor ("x" -> "serving_default_x:0"). */
  std::string signature;
  std::map<std::string, std::string> signature_inputs;
  std::map<std::string, std::string> signature_outputs;
  /*! \brief Checkpoint V2 prefix holding variable values ("dir/variables/variables"); empty if none. */
  std::string checkpoint_prefix;
  /*! \brief Variable node name -> checkpoint key, where they differ (TF2 object-graph keys). */
  std::map<std::string, std::string> checkpoint_keys;

  /*! \brief The tensor a name refers to: a signature key is replaced by its tensor, others stay. */
  std::string ResolveName(const std::string& name) const;
};

/*!
 * \brief Reads a model: a SavedModel directory (with `signature`, default "serving_default"),
 * a `.meta` MetaGraphDef, a text GraphDef (`.pbtxt`, `.txt`, or any file that does not parse as
 * binary), or a binary GraphDef. A `.meta` file next to `<prefix>.index` gets that checkpoint.
 * A SavedModel's own `saved_model.pb` (or `.pbtxt`) loads the SavedModel of its directory.
 * \throws ir::Error naming the file and what is wrong with it.
 */
TFModel LoadModel(const std::string& path, const std::string& signature = "");
/*! \brief `path` names a SavedModel's `saved_model.pb` or `saved_model.pbtxt` file (not its directory). */
bool IsSavedModelFile(const std::string& path);

/*! \brief What a graph input expects, from its node's attributes (shape may be partial). */
struct InputSpec {
  Shape shape;
  DType dtype = DType::kUnknown;
};

/*!
 * \brief The shape and dtype of the tensor `name` (a signature key or a node name) as its
 * node declares them ("shape"/"dtype" of a Placeholder, else "T"); unknown parts stay unknown.
 * \throws ir::Error when no node has that name.
 */
InputSpec FindInputSpec(const TFModel& model, const std::string& name);

/*! \brief Names of the nodes of the model's GraphDef, in order (function bodies not included). */
std::vector<std::string> NodeNames(const TFModel& model);

/*! \brief A binary GraphDef's bytes, checked; throws ir::Error for bytes that are not one. */
TFModel ModelFromBinary(const std::string& bytes, const std::string& origin = "<memory>");
/*! \brief A text-format GraphDef; throws ir::Error with the parser's line and column. */
TFModel ModelFromText(const std::string& text, const std::string& origin = "<memory>");

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_MODEL_H_
