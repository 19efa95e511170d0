/*!
 * \file graph_json_fuzzer.cc
 * \brief libFuzzer target: each input is graph JSON (see README.md, "Fuzzing").
 *
 * ir::Error is the expected outcome for bad input. A graph that loads is printed, saved and
 * loaded again (which must succeed) and shape/type-inferred. Anything else (a crash, another
 * exception, a hang, an allocation the input did not pay for) is a bug.
 */
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ir/graph_io.h"
#include "ir/pass.h"

namespace {

void Exercise(const ir::Graph& graph) {
  ir::PrintGraphText(graph);
  ir::PrintGraphDot(graph);
  std::string saved = ir::SaveJSON(graph);
  try {
    ir::LoadJSON(saved);
  } catch (const ir::Error&) {
    std::abort();  // a saved graph must load again
  }
  try {
    ir::PrintGraphText(ir::ApplyPasses(graph, {"InferShape", "InferType"}));
  } catch (const ir::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ir::Graph graph;
  try {
    graph = ir::LoadJSON(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ir::Error&) {
    return 0;
  }
  Exercise(graph);
  return 0;
}
