/*!
 * \file op.h
 * \brief Operators and their attribute registry.
 *
 * An op is registered once by name (`IR_REGISTER_OP(exp)`) and described by chained
 * setters. Everything passes need to know about it (shape inference, gradient,
 * code generation, kernels...) is attached as a typed attribute with `set_attr<T>`,
 * from any translation unit or from a shared library loaded later. Passes read an
 * attribute for all ops at once through `Op::GetAttr<T>(key)`, an OpMap indexed by op.
 */
#ifndef IR_OP_H_
#define IR_OP_H_

#include <dmlc/any.h>
#include <dmlc/parameter.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ir/base.h"
#include "ir/node.h"

namespace ir {

template <typename T>
class OpMap;

/*! \brief Documentation of one input or parameter of an op. */
struct ArgumentInfo {
  std::string name;
  /*! \brief Type description, e.g. "NDArray" or "int, optional, default=1". */
  std::string type;
  std::string description;
};

/*! \brief Marker for ops that accept any number of inputs. */
constexpr uint32_t kVariadic = static_cast<uint32_t>(-1);

/*! \brief An operator: its identity, its signature and its documentation. */
class Op {
 public:
  std::string name;
  std::string description;
  /*! \brief Inputs first (as listed by set_input_names), then parameters. */
  std::vector<ArgumentInfo> arguments;
  /*! \brief Fixed number of inputs, or kVariadic. Ignored when get_num_inputs is set. */
  uint32_t num_inputs = 1;
  uint32_t num_outputs = 1;
  /*! \brief Input count computed from the node's (parsed) attributes. */
  std::function<uint32_t(const NodeAttrs&)> get_num_inputs;
  std::function<uint32_t(const NodeAttrs&)> get_num_outputs;
  /*! \brief Static input names, used to compose by keyword. */
  std::vector<std::string> input_names;
  /*! \brief Parses NodeAttrs::dict into NodeAttrs::parsed; throws on bad values. */
  std::function<void(NodeAttrs*)> attr_parser;

  /*! \brief Position in every OpMap. */
  uint32_t index() const { return index_; }

  Op& describe(const std::string& text);
  Op& add_argument(const std::string& name, const std::string& type, const std::string& description);
  Op& add_arguments(const std::vector<dmlc::ParamFieldInfo>& fields);
  Op& set_num_inputs(uint32_t n);
  Op& set_num_inputs(std::function<uint32_t(const NodeAttrs&)> fn);
  Op& set_num_outputs(uint32_t n);
  Op& set_num_outputs(std::function<uint32_t(const NodeAttrs&)> fn);
  /*! \brief Names inputs (and documents them as arguments); composing by keyword uses them. */
  Op& set_input_names(const std::vector<std::string>& names);
  Op& set_attr_parser(std::function<void(NodeAttrs*)> parser);
  /*! \brief Parses attributes into a dmlc::Parameter struct P and documents its fields. */
  template <typename P>
  Op& set_param();
  /*! \brief Runs a registration helper shared by a family of ops: `.apply(UnaryOp<Exp>())`. */
  template <typename F>
  Op& apply(F&& helper) {
    helper(*this);
    return *this;
  }
  /*! \brief Makes `alias` another name for this op (Op::Get(alias) == this). */
  Op& add_alias(const std::string& alias);
  /*!
   * \brief Attaches attribute `key` to this op.
   *
   * A higher priority overrides a lower one; the same priority twice is an error
   * (a duplicate registration). All values of one key must have the same type T.
   */
  template <typename T>
  Op& set_attr(const std::string& key, const T& value, int priority = 10);

  /*! \brief Number of inputs a node with these attributes takes (kVariadic if any). */
  uint32_t InputCount(const NodeAttrs& attrs) const;
  uint32_t OutputCount(const NodeAttrs& attrs) const;

  /*! \brief The op named `name` (or an alias); throws ir::Error naming close matches. */
  static const Op* Get(const std::string& name);
  /*! \brief Like Get but returns nullptr for unknown names. */
  static const Op* Find(const std::string& name);
  /*! \brief Names of all registered ops (no aliases), sorted. */
  static std::vector<std::string> ListNames();
  /*! \brief Keys of all op attributes registered so far, sorted. */
  static std::vector<std::string> ListAttrKeys();
  /*!
   * \brief The map of attribute `key` over all ops.
   * \throws ir::Error when no op registers `key`, or when it has another type than T.
   */
  template <typename T>
  static const OpMap<T>& GetAttr(const std::string& key);
  /*! \brief Like GetAttr, but nullptr when no op registers `key` (still throws on a type mismatch). */
  template <typename T>
  static const OpMap<T>* FindAttr(const std::string& key);
  /*! \brief True when op `op` registers attribute `key` (whatever its type). */
  static bool HasAttr(const std::string& key, const Op* op);

  /*! \brief Registers `name`, or returns the op already registered under it. */
  static Op& Register(const std::string& name);

 private:
  template <typename T>
  friend class OpMap;
  friend class OpRegistry;
  uint32_t index_ = 0;
};

namespace detail {
/*! \brief Type-erased storage of one attribute key; owned by the registry. */
class OpMapBase {
 public:
  virtual ~OpMapBase() = default;
  virtual bool Has(const Op* op) const = 0;
  /*! \brief Number of op slots (set or not). */
  virtual uint32_t slots() const = 0;
  /*! \brief Priority of the value at op index `index`; 0 when unset. */
  virtual int priority(uint32_t index) const = 0;
  /*! \brief A copy (staged edits of a loading library go to a copy, see LoadOpLibrary). */
  virtual std::unique_ptr<OpMapBase> Clone() const = 0;
  /*! \brief An empty map of the same value type. */
  virtual std::unique_ptr<OpMapBase> CloneEmpty() const = 0;
  /*! \brief Copies slot `from` of `src` (same value type) into slot `to`. */
  virtual void CopySlot(const OpMapBase& src, uint32_t from, uint32_t to) = 0;
  std::string key;
  std::type_index type = typeid(void);
  const std::type_info* type_info = &typeid(void);
};
/*!
 * \brief Looks up the attribute map of `key` and checks its type.
 * Returns nullptr when the key is unknown. Throws ir::Error on a type mismatch.
 */
OpMapBase* GetOpMap(const std::string& key, const std::type_info& type);
/*!
 * \brief Runs `update` on the attribute map of `key` (made by `create` when new) for `op`.
 * Locks the registry while it runs. While an op library loads, the update goes to a staged
 * copy of the map, applied only when the whole library is accepted.
 */
void SetOpAttr(const Op& op, const std::string& key, const std::type_info& type,
               const std::function<OpMapBase*()>& create, const std::function<void(OpMapBase*)>& update);
/*! \brief Reports a registration conflict: thrown, or recorded while a library loads. */
void ReportRegistrationError(const std::string& message);
/*!
 * \brief Wraps a dmlc parameter parsing error into an ir::Error naming the op and node, and
 * the parameter and its value when `bad` (the offending key and value) is given.
 */
[[noreturn]] void ThrowParamError(const NodeAttrs& attrs, const std::exception& err,
                                  const std::pair<const std::string, std::string>* bad = nullptr);
/*! \brief The first (key, value) of `dict` that P cannot take on its own, or nullptr. */
template <typename P>
const std::pair<const std::string, std::string>* FindBadParam(const std::map<std::string, std::string>& dict) {
  for (const auto& kv : dict) {
    P probe;
    try {
      probe.UpdateAllowUnknown(std::map<std::string, std::string>{kv});
    } catch (const dmlc::Error&) {
      return &kv;
    }
  }
  return nullptr;
}
}  // namespace detail

/*! \brief Values of one attribute key, indexed by op. */
template <typename T>
class OpMap : public detail::OpMapBase {
 public:
  /*! \brief The value for `op`; throws ir::Error naming op and key when unset. */
  const T& operator[](const Op* op) const {
    IR_CHECK(op != nullptr) << "attribute '" << key << "' requested for a variable node (no op)";
    IR_CHECK(Has(op)) << "op '" << op->name << "' does not register attribute '" << key << "'";
    return data_[op->index_].first;
  }
  /*! \brief The value for `op`, or `def` when unset (or op is null). */
  const T& get(const Op* op, const T& def) const { return Has(op) ? data_[op->index_].first : def; }
  /*! \brief 1 when `op` registers this key, else 0. */
  int count(const Op* op) const { return Has(op) ? 1 : 0; }
  bool Has(const Op* op) const override {
    return op != nullptr && op->index_ < data_.size() && data_[op->index_].second != 0;
  }
  uint32_t slots() const override { return static_cast<uint32_t>(data_.size()); }
  int priority(uint32_t index) const override { return index < data_.size() ? data_[index].second : 0; }
  std::unique_ptr<detail::OpMapBase> Clone() const override { return std::make_unique<OpMap<T>>(*this); }
  std::unique_ptr<detail::OpMapBase> CloneEmpty() const override {
    auto map = std::make_unique<OpMap<T>>();
    map->key = key;
    map->type = type;
    map->type_info = type_info;
    return map;
  }
  void CopySlot(const detail::OpMapBase& src, uint32_t from, uint32_t to) override {
    if (data_.size() <= to) data_.resize(to + 1, std::make_pair(T(), 0));
    data_[to] = static_cast<const OpMap<T>&>(src).data_[from];
  }

 private:
  friend class Op;
  /*! \brief (value, priority); priority 0 means unset. A deque keeps references stable. */
  std::deque<std::pair<T, int>> data_;
};

template <typename T>
Op& Op::set_attr(const std::string& key, const T& value, int priority) {
  if (priority <= 0) {
    detail::ReportRegistrationError(
        StrCat("op '", name, "': attribute '", key, "' needs a priority > 0, got ", priority));
    return *this;
  }
  detail::SetOpAttr(
      *this, key, typeid(T), [] { return new OpMap<T>(); },
      [&](detail::OpMapBase* base) {
        auto* map = static_cast<OpMap<T>*>(base);
        if (map->data_.size() <= index_) map->data_.resize(index_ + 1, std::make_pair(T(), 0));
        auto& slot = map->data_[index_];
        if (slot.second == priority) {
          detail::ReportRegistrationError(
              StrCat("op '", name, "': attribute '", key, "' is registered twice at priority ", priority));
        } else if (slot.second < priority) {
          slot = std::make_pair(value, priority);
        }
      });
  return *this;
}

template <typename T>
const OpMap<T>* Op::FindAttr(const std::string& key) {
  return static_cast<const OpMap<T>*>(detail::GetOpMap(key, typeid(T)));
}

template <typename T>
const OpMap<T>& Op::GetAttr(const std::string& key) {
  const OpMap<T>* map = FindAttr<T>(key);
  IR_CHECK(map != nullptr) << "no op registers attribute '" << key << "'";
  return *map;
}

/*! \brief Parses NodeAttrs::dict into P (keys of the form __x__ are hidden and skipped). */
template <typename P>
void ParamParser(NodeAttrs* attrs);

/*!
 * \brief Registers op `OpName` (or reopens it) at static-initialization time.
 * Use it again, in any file, to add attributes to an existing op.
 */
#define IR_REGISTER_OP(OpName) \
  static ::ir::Op& IR_UNIQUE_NAME_(__ir_op_) __attribute__((unused)) = ::ir::Op::Register(#OpName)

/*!
 * \brief dlopens a shared library whose static initializers register ops and attributes.
 *
 * After it returns, the library's ops are first-class: listed, documented and usable by
 * every pass. Libraries stay loaded for the life of the process.
 * \throws ir::Error for a path that cannot be loaded, or when the library's registrations
 *         conflict with existing ones (each conflict is named).
 */
void LoadOpLibrary(const std::string& path);

template <typename P>
void ParamParser(NodeAttrs* attrs) {
  P param;
  try {
    param.Init(attrs->dict, dmlc::parameter::kAllowHidden);
  } catch (const dmlc::Error& err) {
    // dmlc often does not say which parameter it rejected: find it by parsing one at a time.
    detail::ThrowParamError(*attrs, err, detail::FindBadParam<P>(attrs->dict));
  }
  attrs->parsed = std::move(param);
}

template <typename P>
Op& Op::set_param() {
  add_arguments(P::__FIELDS__());
  return set_attr_parser(ParamParser<P>);
}
}  // namespace ir

#endif  // IR_OP_H_
