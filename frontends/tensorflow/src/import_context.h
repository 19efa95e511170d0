/*!
 * \file import_context.h
 * \brief What a converter sees of the TF node it converts: inputs as our entries, attributes
 * with TensorFlow's types, values known at import, and a way to build our nodes.
 */
#ifndef IR_TF_IMPORT_CONTEXT_H_
#define IR_TF_IMPORT_CONTEXT_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir_tf_node_def.pb.h"

namespace ir {
namespace tf {

class GraphImporter;
struct ImportSpec;

/*! \brief One TF node being converted. Errors thrown here get the node's name and op prepended. */
class ImportContext {
 public:
  ImportContext(GraphImporter* importer, const tfproto::NodeDef& def, std::vector<NodeEntry> inputs);

  const tfproto::NodeDef& def() const { return def_; }
  const std::string& name() const { return def_.name(); }
  const std::string& op() const { return def_.op(); }

  // ------------------------------------------------------------ inputs
  /*! \brief Number of data inputs (control inputs are handled by the importer). */
  size_t num_inputs() const { return inputs_.size(); }
  /*! \brief Data input `i`; throws when the node has fewer inputs. */
  const NodeEntry& input(size_t i) const;
  const std::vector<NodeEntry>& inputs() const { return inputs_; }
  /*! \brief Throws unless the node has exactly `n` data inputs. */
  void ExpectInputs(size_t n) const;
  /*!
   * \brief Throws unless the int attribute `key` (TF's list length "N"), when present, is `count`,
   * the number of inputs the node's list really has.
   */
  void ExpectListLength(const std::string& key, size_t count) const;
  /*! \brief `axis` in [-rank, rank) made non-negative; throws naming `what`, the axis and the rank. */
  int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) const;
  /*! \brief The variable node behind input `i` (a ref, or a resource handle through identities). */
  NodeEntry VariableInput(size_t i) const;

  // ------------------------------------------------------------ attributes
  bool HasAttr(const std::string& key) const;
  int64_t Int(const std::string& key) const;
  int64_t Int(const std::string& key, int64_t def) const;
  bool Bool(const std::string& key, bool def) const;
  double Float(const std::string& key) const;
  double Float(const std::string& key, double def) const;
  std::string Str(const std::string& key) const;
  std::string Str(const std::string& key, const std::string& def) const;
  /*! \brief A type attribute ("T", "dtype") as our DType; unsupported types are errors naming it. */
  DType Type(const std::string& key) const;
  std::vector<int64_t> Ints(const std::string& key) const;
  Shape ShapeAttr(const std::string& key) const;
  const tfproto::AttrValue& Attr(const std::string& key) const;

  // ------------------------------------------------------------ values known at import
  /*! \brief The value of input `i`, folded from constants and known shapes; throws when unknown. */
  NDArray ConstInput(size_t i) const;
  /*! \brief The value of input `i` when it is known at import, else an undefined array. */
  NDArray TryConstInput(size_t i) const;
  /*! \brief ConstInput(i) as integers (a scalar gives one). */
  std::vector<int64_t> ConstInts(size_t i) const;
  /*! \brief ConstInput(i) as one number; throws unless it has one element. */
  double ConstScalar(size_t i) const;
  /*! \brief The inferred (possibly partial) shape and dtype of input `i`. */
  Shape InputShape(size_t i) const;
  DType InputType(size_t i) const;
  /*! \brief True when this node's output 0 will be fed; its shape then. */
  bool IsFed() const;
  Shape FedShape() const;
  /*! \brief The GraphDef's producer version (0 when absent). */
  int producer() const;
  /*! \brief The largest Const tensor accepted, in bytes. */
  int64_t max_const_bytes() const;
  /*! \brief What this import was asked for (nested body imports start from it). */
  const ImportSpec& spec() const;

  // ------------------------------------------------------------ building
  /*! \brief A node of our op `op`, named after the TF node (plus "/suffix" when given). */
  NodeEntry Op(const std::string& op, std::vector<NodeEntry> inputs,
               const std::map<std::string, std::string>& attrs = {}, const std::string& suffix = "");
  /*! \brief A node of control-flow op `op` (cond, while_loop) with `bodies`, named after the TF node. */
  NodePtr OpWithBodies(const std::string& op, std::vector<NodeEntry> inputs,
                       std::vector<std::shared_ptr<const Subgraph>> bodies,
                       const std::map<std::string, std::string>& attrs = {}, const std::string& suffix = "");
  /*! \brief A `constant` node holding `value`. */
  NodeEntry Constant(const NDArray& value, const std::string& suffix = "");
  /*! \brief A variable node named after the TF node with hidden attributes (__kind__...). */
  NodeEntry Variable(const std::map<std::string, std::string>& hints);
  /*! \brief Every node this conversion created (the importer adds control dependencies to them). */
  const std::vector<NodePtr>& created() const { return created_; }

  /*! \brief Throws ir::Error(message) (the importer prefixes the node). */
  [[noreturn]] void Fail(const std::string& message) const;

 private:
  const tfproto::AttrValue* FindAttr(const std::string& key) const;

  GraphImporter* importer_;
  const tfproto::NodeDef& def_;
  std::vector<NodeEntry> inputs_;
  std::vector<NodePtr> created_;
};

/*!
 * \brief A value needed at import depends on a placeholder nobody feeds; the importer reports
 * the placeholder first, as it is what the caller must fix.
 */
class UnfedPlaceholderError : public Error {
 public:
  UnfedPlaceholderError(std::string placeholder, const std::string& msg)
      : Error(msg), placeholder_(std::move(placeholder)) {}
  const std::string& placeholder() const { return placeholder_; }

 private:
  std::string placeholder_;
};

/*! \brief "(1,2,3)": integers as an IntList attribute. */
std::string IntsAttr(const std::vector<int64_t>& values);
/*! \brief Shortest text that parses back to the same double. */
std::string NumberAttr(double value);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_IMPORT_CONTEXT_H_
