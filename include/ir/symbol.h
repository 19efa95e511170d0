/*!
 * \file symbol.h
 * \brief Symbol: the front-end handle for building graphs by composition.
 *
 * A Symbol is a list of output entries. A variable symbol has one output; composing an
 * op symbol with input symbols wires them in; a group bundles several outputs.
 */
#ifndef IR_SYMBOL_H_
#define IR_SYMBOL_H_

#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/node.h"

namespace ir {

class Symbol {
 public:
  /*! \brief Which free variables ListInputs returns. */
  enum ListInputOption {
    kAll = 0,
    /*! \brief Variables no op mutates. */
    kReadOnlyArgs = 1,
    /*! \brief Variables some op mutates (FMutateInputs), e.g. the target of assign. */
    kMutable = 2,
  };

  std::vector<NodeEntry> outputs;

  /*! \brief A deep copy of the graph reachable from the outputs (variables included). */
  Symbol Copy() const;
  /*! \brief Output `index` as a symbol of its own. */
  Symbol operator[](size_t index) const;
  /*! \brief Free variables in deterministic topological order. */
  std::vector<NodePtr> ListInputs(ListInputOption option = kAll) const;
  std::vector<std::string> ListInputNames(ListInputOption option = kAll) const;
  /*! \brief "name" for single-output nodes, else "name_output<i>" (or FListOutputNames). */
  std::vector<std::string> ListOutputNames() const;
  /*! \brief Every output of every node, as one grouped symbol. */
  Symbol GetInternals() const;
  /*! \brief The entries feeding this symbol's (single) head node. */
  Symbol GetChildren() const;

  /*!
   * \brief Binds inputs. For an atomic symbol (one op node, inputs not yet set), fills the op's
   * inputs from `args` by position and `kwargs` by input name. Otherwise substitutes free
   * variables: `args` by ListInputs order, `kwargs` by variable name. Throws on a
   * mismatch, naming the op, node and argument.
   */
  void Compose(const std::vector<Symbol>& args, const std::unordered_map<std::string, Symbol>& kwargs,
               const std::string& name = "");
  /*! \brief Copy()+Compose(): returns the composed symbol, leaving this one untouched. */
  Symbol operator()(const std::vector<Symbol>& args, const std::unordered_map<std::string, Symbol>& kwargs = {},
                    const std::string& name = "") const;

  /*! \brief Makes every head node wait for all nodes of `deps`. */
  void AddControlDeps(const Symbol& deps);
  /*! \brief Sets string attributes on the single head node (parsed again by its op). */
  void SetAttrs(const std::map<std::string, std::string>& attrs);
  /*!
   * \brief Attribute `key` of the head node, as SaveJSON would write it (state an op holds only
   * in parsed form, such as a constant's `data_base64`, is encoded on demand); false if absent.
   */
  bool GetAttr(const std::string& key, std::string* out) const;
  /*! \brief Writes a readable listing of the nodes. */
  void Print(std::ostream& os) const;

  /*! \brief An op node with its inputs not yet bound (an "atomic" symbol). */
  static Symbol CreateFunctor(const Op* op, const std::map<std::string, std::string>& attrs,
                              const std::string& name = "");
  static Symbol CreateVariable(const std::string& name, const std::map<std::string, std::string>& attrs = {});
  static Symbol CreateGroup(const std::vector<Symbol>& symbols);
};

}  // namespace ir

#endif  // IR_SYMBOL_H_
