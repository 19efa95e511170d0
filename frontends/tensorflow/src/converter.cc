/*!
 * \file converter.cc
 * \brief The converter table keyed by TensorFlow op name.
 */
#include "converter.h"

#include <map>
#include <mutex>

namespace ir {
namespace tf {
namespace {

struct Table {
  std::mutex mutex;
  std::map<std::string, Converter> converters;
};

Table& GetTable() {
  static Table table;
  return table;
}

}  // namespace

const Converter* FindConverter(const std::string& tf_op) {
  Table& table = GetTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.converters.find(tf_op);
  return it == table.converters.end() ? nullptr : &it->second;
}

bool RegisterConverter(const std::vector<std::string>& tf_ops, Converter fn) {
  Table& table = GetTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (const std::string& op : tf_ops) {
    IR_CHECK(table.converters.emplace(op, fn).second) << "TensorFlow op '" << op << "' has two converters";
  }
  return true;
}

std::vector<std::string> ConverterNames() {
  Table& table = GetTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  std::vector<std::string> names;
  for (const auto& kv : table.converters) names.push_back(kv.first);
  return names;
}

}  // namespace tf
}  // namespace ir
