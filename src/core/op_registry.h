/*!
 * \file op_registry.h
 * \brief The process-wide store of ops, aliases and attribute maps (private to the core).
 */
#ifndef IR_CORE_OP_REGISTRY_H_
#define IR_CORE_OP_REGISTRY_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>

#include "ir/op.h"

namespace ir {

/*! \brief Owns every Op and every attribute map. One instance per process (in libir.so). */
class OpRegistry {
 public:
  static OpRegistry* Global() {
    static OpRegistry* registry = new OpRegistry();  // never destroyed: ops outlive statics
    return registry;
  }
  std::recursive_mutex mutex;
  std::deque<std::unique_ptr<Op>> ops;
  std::unordered_map<std::string, Op*> by_name;  // names and aliases
  std::map<std::string, std::unique_ptr<detail::OpMapBase>> attrs;

  /*! \brief The op named `name` (or alias), nullptr if none. Caller holds `mutex`. */
  Op* FindLocked(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
  /*! \brief Adds `op` (whose index must be ops.size()) under its name. Caller holds `mutex`. */
  Op* AddLocked(std::unique_ptr<Op> op) {
    Op* raw = op.get();
    ops.push_back(std::move(op));
    by_name[raw->name] = raw;
    return raw;
  }
  /*! \brief A new op's index is its position in `ops`, the slot it gets in every OpMap. */
  static void SetIndex(Op* op, uint32_t index) { op->index_ = index; }
};

namespace detail {
/*! \brief A new, empty attribute map of `key` made by `create`, labelled with its value type. */
std::unique_ptr<OpMapBase> NewOpMap(const std::function<OpMapBase*()>& create, const std::string& key,
                                    const std::type_info& type);
/*! \brief Why `map` cannot hold a value of `type` for `op` (naming op and key); "" when it can. */
std::string AttrTypeMismatch(const Op& op, const OpMapBase& map, const std::type_info& type);
}  // namespace detail

}  // namespace ir

#endif  // IR_CORE_OP_REGISTRY_H_
