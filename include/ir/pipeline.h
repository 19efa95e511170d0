/*!
 * \file pipeline.h
 * \brief Named pass pipelines: ordered lists of registered passes, registered beside them.
 *
 * A pipeline is a name and a list of steps; each step names a pass and may run only when an
 * option is on (`condition`, e.g. the session's "simplify" or "fusion") or only when its pass
 * is registered (`if_registered`). The standard pipelines are registered in
 * src/passes/pipelines.cc; the executor binds graphs with "session", tinyflow probes shapes
 * with "infer", and the TF importer and control-flow bodies fold with "fold_constants"; the TF
 * frontend registers "tf_session" for imported graphs. An op library may register its own
 * pipelines or insert passes into existing ones; while it loads, those changes are staged and
 * applied with the rest of its registrations (all or none). Printed (ToString, operator<<):
 *
 *   session: InferShape, InferType, Vectorize, Simplify [if simplify], ScheduleCollectives,
 *            Fusion [if fusion, if registered], ..., PlanMemory
 */
#ifndef IR_PIPELINE_H_
#define IR_PIPELINE_H_

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ir/base.h"

namespace ir {

/*! \brief One step of a pipeline. */
struct PipelineStep {
  PipelineStep(std::string pass_name, std::string when = "", bool only_if_registered = false)  // NOLINT
      : pass(std::move(pass_name)), condition(std::move(when)), if_registered(only_if_registered) {}
  PipelineStep(const char* pass_name, const char* when = "", bool only_if_registered = false)  // NOLINT
      : PipelineStep(std::string(pass_name), std::string(when), only_if_registered) {}
  /*! \brief The registered pass the step applies. */
  std::string pass;
  /*! \brief The option that must be on for the step to run; empty: always. */
  std::string condition;
  /*! \brief Skip the step when its pass is not registered (a build or library without it). */
  bool if_registered = false;
};

/*! \brief A registered pipeline (a copy taken when constructed). */
class Pipeline {
 public:
  /*! \brief The pipeline registered as `name`; throws ir::Error listing the registered ones. */
  explicit Pipeline(const std::string& name);

  const std::string& name() const { return name_; }
  const std::vector<PipelineStep>& steps() const { return steps_; }
  /*!
   * \brief The passes to apply, in order: the steps whose condition is on in `options` (a
   * condition `options` does not name is off) and whose pass, when `if_registered`, is registered.
   */
  std::vector<std::string> Passes(const std::map<std::string, bool>& options = {}) const;
  /*! \brief "name: Pass, Pass [if option], Pass [if registered], ...". */
  std::string ToString() const;

  /*! \brief Registers pipeline `name`; throws when a pipeline of that name exists. */
  static void Register(const std::string& name, std::vector<PipelineStep> steps);
  /*! \brief Inserts `step` into pipeline `name` after (before) the first step applying pass `anchor`. */
  static void InsertAfter(const std::string& name, const std::string& anchor, PipelineStep step);
  static void InsertBefore(const std::string& name, const std::string& anchor, PipelineStep step);
  /*! \brief Names of the registered pipelines, sorted. */
  static std::vector<std::string> ListNames();

 private:
  std::string name_;
  std::vector<PipelineStep> steps_;
};

std::ostream& operator<<(std::ostream& os, const Pipeline& pipeline);

/*!
 * \brief Registers a pipeline at load time:
 *   IR_REGISTER_PIPELINE(infer, {{"InferShape"}, {"InferType"}});
 */
#define IR_REGISTER_PIPELINE(Name, ...)                                       \
  static const bool IR_UNIQUE_NAME_(__ir_pipeline_) __attribute__((unused)) = \
      (::ir::Pipeline::Register(#Name, __VA_ARGS__), true)

}  // namespace ir

#endif  // IR_PIPELINE_H_
