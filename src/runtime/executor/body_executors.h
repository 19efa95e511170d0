/*!
 * \file body_executors.h
 * \brief The executors of control-flow bodies: one per body (Subgraph) of the graph an Executor
 * runs, each binding its body once per input signature and reused by every iteration and run.
 */
#ifndef IR_RUNTIME_EXECUTOR_BODY_EXECUTORS_H_
#define IR_RUNTIME_EXECUTOR_BODY_EXECUTORS_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/runtime.h"

namespace ir {
namespace runtime {

/*! \brief Lazily made executors of bodies, keyed by the body (bodies never change once built). */
class BodyExecutors {
 public:
  /*! \brief One body's executor and how its params are fed. */
  struct Body {
    std::unique_ptr<Executor> executor;
    /*! \brief Per param: its name when the body reads it, else empty (an unused param is not fed). */
    std::vector<std::string> feed_names;
    /*! \brief The feeds of a run on `args` (one per param); throws naming the node on a wrong count. */
    std::unordered_map<std::string, NDArray> Feeds(const NodeAttrs& node, size_t index,
                                                   const std::vector<NDArray>& args) const;
    /*! \brief The records travelling with the args (one per param, or none), by feed name. */
    std::unordered_map<std::string, ForwardRecordPtr> FeedRecords(const std::vector<ForwardRecordPtr>& records) const;
  };

  /*!
   * \brief The executor of `body`, made on first use with the outer executor's options and store;
   * one per set of donated params (`donate[i]`, empty for none), whose plans may write outputs
   * into those arguments (PlanMemory's memory.donated_inputs).
   */
  Body& Get(const Subgraph& body, const std::vector<bool>& donate, const SessionOptions& options,
            const std::shared_ptr<VariableStore>& variables);

 private:
  std::mutex mutex_;
  std::map<std::pair<const Subgraph*, std::vector<bool>>, std::unique_ptr<Body>> bodies_;
};

/*! \brief True when some body of some control-flow node of `graph` (at any depth) updates a variable. */
bool BodiesUpdateVariables(const Graph& graph);

}  // namespace runtime
}  // namespace ir

#endif  // IR_RUNTIME_EXECUTOR_BODY_EXECUTORS_H_
