/*!
 * \file session.h
 * \brief TFSession: runs a TensorFlow model the way tf.Session.run does (feeds, fetches and
 * targets by TensorFlow name) on an ir::Session.
 *
 * Each distinct set of requested names and feed shapes is imported once (values computed from
 * shapes fold to constants for those shapes) and its executor is cached; variables live in the
 * ir::Session's VariableStore under their TensorFlow node names, so every import shares them.
 * The executor's pipeline runs FoldConstants after shape and type inference.
 */
#ifndef IR_TF_SESSION_H_
#define IR_TF_SESSION_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/runtime.h"
#include "ir_tf/model.h"

namespace ir {
namespace tf {

/*! \brief Time spent by the last TFSession::Run, in milliseconds. */
struct TFRunTimings {
  /*! \brief Import (zero when the import was cached). */
  double import_ms = 0;
  /*! \brief Pass pipeline of the executor (zero when the plan was cached). */
  double bind_ms = 0;
  double run_ms = 0;
};

/*! \brief Runs a TFModel. */
class TFSession {
 public:
  explicit TFSession(TFModel model, SessionOptions options = SessionOptions());
  ~TFSession();

  /*!
   * \brief Feeds tensors by name, computes `fetches` ("name" or "name:i"; signature keys allowed)
   * and runs `targets` (nodes run for their effect). Returns one array per fetch.
   */
  std::vector<NDArray> Run(const std::map<std::string, NDArray>& feeds, const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets = {});

  /*!
   * \brief Reads every supported tensor of the checkpoint bundle at `prefix` into the variables
   * (by the model's checkpoint keys, else by name). Returns the variable names set.
   */
  std::vector<std::string> RestoreCheckpoint(const std::string& prefix);

  const TFModel& model() const;
  Session& session();
  const TFRunTimings& last_timings() const;
  /*! \brief The pass pipeline the executors run. */
  static std::vector<std::string> Pipeline(const SessionOptions& options);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_SESSION_H_
