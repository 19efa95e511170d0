/*!
 * \file ir_dump.cc
 * \brief IR dumps after passes (text and Graphviz dot).
 */
#include "core/ir_dump.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "ir/graph_attr.h"
#include "ir/graph_io.h"

namespace ir {
namespace detail {

namespace {

std::string Setting(const Graph& graph, const std::string& attr, const char* env) {
  if (graph.HasAttr(attr)) return graph.GetAttr<std::string>(attr);
  const char* value = std::getenv(env);
  return value ? value : "";
}

bool FilterAccepts(const std::string& filter, const std::string& pass) {
  if (filter.empty()) return true;
  std::stringstream ss(filter);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == pass) return true;
  }
  return false;
}

void MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      throw Error(StrCat("cannot create IR dump directory '", prefix, "': ", std::strerror(errno)));
    }
  }
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  IR_CHECK(out.good()) << "cannot write IR dump file '" << path << "'";
}

}  // namespace

void DumpAfterPass(const Graph& graph, const std::string& pass) {
  std::string dir = Setting(graph, "dump_dir", "IR_DUMP_DIR");
  if (dir.empty() || !FilterAccepts(Setting(graph, "dump_filter", "IR_DUMP_FILTER"), pass)) return;
  static std::mutex mutex;
  static std::map<std::string, int> counters;
  int number;
  {
    std::lock_guard<std::mutex> lock(mutex);
    number = counters[dir]++;
  }
  MakeDirs(dir);
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%03d_", number);
  std::string base = StrCat(dir, "/", prefix, pass);
  WriteFile(base + ".txt", StrCat("# IR after pass ", pass, "\n", PrintGraphText(graph)));
  WriteFile(base + ".dot", PrintGraphDot(graph));
}

}  // namespace detail
}  // namespace ir
