/*!
 * \file graph_attr.h
 * \brief What graph attributes mean: their indexing (graph, node or entry) and JSON form.
 *
 * Two registries:
 *  - graph attribute *keys* (`IR_REGISTER_GRAPH_ATTR(shape)`): description, the C++ type and
 *    whether the value is a vector indexed by node id or entry id. The pass manager uses the
 *    kind to drop stale vectors and to check their sizes.
 *  - JSON *types* (`IR_REGISTER_GRAPH_ATTR_TYPE(ShapeVector, "list_shape")`): how a C++ type
 *    is written to and read from JSON, so any attribute can be saved, loaded and read from C.
 */
#ifndef IR_GRAPH_ATTR_H_
#define IR_GRAPH_ATTR_H_

#include <dmlc/any.h>
#include <dmlc/json.h>

#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <vector>

#include "ir/base.h"

namespace ir {

namespace detail {
template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};
}  // namespace detail

/*! \brief What a graph attribute's value is indexed by. */
enum class AttrIndex {
  /*! \brief A value for the whole graph (options, summaries). */
  kGraph,
  /*! \brief A vector with one element per node id of the IndexedGraph. */
  kNode,
  /*! \brief A vector with one element per entry id of the IndexedGraph. */
  kEntry,
};
const char* AttrIndexName(AttrIndex kind);

/*! \brief How one C++ type travels as JSON. */
struct GraphAttrType {
  /*! \brief Name used in saved graphs, e.g. "list_shape". */
  std::string name;
  std::type_index type = typeid(void);
  std::function<void(dmlc::JSONWriter*, const dmlc::any&)> write;
  std::function<dmlc::any(dmlc::JSONReader*)> read;
  /*! \brief Element count for vector types, else -1. */
  std::function<long(const dmlc::any&)> size;
  /*! \brief JSON text of element i for vector types (used by printers). */
  std::function<std::string(const dmlc::any&, size_t)> element;

  /*! \brief Registers (or reopens) the JSON type named `name`. */
  static GraphAttrType& Register(const std::string& name);
  /*! \brief The type registered for a C++ type; nullptr if none. */
  static const GraphAttrType* Find(const std::type_info& type);
  /*! \brief The type registered under `name`; nullptr if none. */
  static const GraphAttrType* Find(const std::string& name);
  template <typename T>
  GraphAttrType& set_type();
};

/*! \brief Documentation and indexing of one graph attribute key. */
struct GraphAttrInfo {
  std::string name;
  std::string description;
  AttrIndex index = AttrIndex::kGraph;
  /*! \brief The C++ type; typeid(void) when unspecified. */
  std::type_index type = typeid(void);
  /*! \brief False for values that differ run to run (timings): IR dumps leave them out. */
  bool in_dump = true;

  GraphAttrInfo& describe(const std::string& text) {
    description = text;
    return *this;
  }
  GraphAttrInfo& set_index(AttrIndex kind) {
    index = kind;
    return *this;
  }
  template <typename T>
  GraphAttrInfo& set_type() {
    type = typeid(T);
    return *this;
  }
  GraphAttrInfo& set_in_dump(bool value) {
    in_dump = value;
    return *this;
  }

  static GraphAttrInfo& Register(const std::string& name);
  /*! \brief Info for `name`; nullptr for keys nobody registered (treated as kGraph). */
  static const GraphAttrInfo* Find(const std::string& name);
  static std::vector<const GraphAttrInfo*> List();
};

/*! \brief Writes `value` as `["type_name", value]`; throws if its type has no JSON codec. */
void WriteTypedAttrJSON(dmlc::JSONWriter* writer, const std::string& key, const dmlc::any& value);
/*! \brief JSON of a value alone (no type tag); throws if its type has no codec. */
std::string AttrToJSON(const std::string& key, const dmlc::any& value);
/*!
 * \brief Parses an attribute value: `["type_name", value]`, or a bare value when `key` is a
 * registered key with a known type.
 * \throws ir::Error naming the key: malformed JSON (nesting is bounded), unknown type, or a
 * value that does not match its type.
 */
dmlc::any AttrFromJSON(const std::string& key, const std::string& json);

class IndexedGraph;
/*!
 * \brief Checks that `value`, given to node- or entry-indexed key `key`, is a list with one
 * element per node or entry of `idx` (printers and passes index it blindly).
 * \throws ir::Error naming the key and both sizes. Graph-level and unregistered keys pass.
 */
void CheckGraphAttrSize(const std::string& key, const dmlc::any& value, const IndexedGraph& idx);

template <typename T>
GraphAttrType& GraphAttrType::set_type() {
  type = typeid(T);
  write = [](dmlc::JSONWriter* writer, const dmlc::any& value) { writer->Write(dmlc::get<T>(value)); };
  read = [](dmlc::JSONReader* reader) {
    T value;
    reader->Read(&value);
    return dmlc::any(std::move(value));
  };
  size = [](const dmlc::any& value) -> long {
    if constexpr (detail::IsVector<T>::value) {
      return static_cast<long>(dmlc::get<T>(value).size());
    } else {
      (void)value;
      return -1;
    }
  };
  element = [](const dmlc::any& value, size_t i) -> std::string {
    if constexpr (detail::IsVector<T>::value) {
      std::ostringstream os;
      dmlc::JSONWriter writer(&os);
      writer.Write(dmlc::get<T>(value)[i]);
      return os.str();
    } else {
      (void)value;
      (void)i;
      return std::string();
    }
  };
  return *this;
}

#define IR_REGISTER_GRAPH_ATTR_TYPE(Type, TypeName)                                      \
  static ::ir::GraphAttrType& IR_UNIQUE_NAME_(__ir_attr_type_) __attribute__((unused)) = \
      ::ir::GraphAttrType::Register(TypeName).set_type<Type>()

/*! \brief Registers graph attribute key `KeyString` (a string literal such as "shape"). */
#define IR_REGISTER_GRAPH_ATTR(KeyString)                                               \
  static ::ir::GraphAttrInfo& IR_UNIQUE_NAME_(__ir_attr_key_) __attribute__((unused)) = \
      ::ir::GraphAttrInfo::Register(KeyString)

}  // namespace ir

namespace dmlc {
namespace json {
/*! \brief DType in JSON is its name: "float32". */
template <>
struct Handler<ir::DType> {
  static void Write(JSONWriter* writer, const ir::DType& value);
  static void Read(JSONReader* reader, ir::DType* value);
};
}  // namespace json
}  // namespace dmlc

#endif  // IR_GRAPH_ATTR_H_
