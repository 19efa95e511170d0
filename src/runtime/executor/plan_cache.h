/*!
 * \file plan_cache.h
 * \brief An executor's bound plans, one per input signature, each with a pool of idle
 * Workspaces: concurrent runs share the plan and each checks out its own Workspace.
 */
#ifndef IR_RUNTIME_EXECUTOR_PLAN_CACHE_H_
#define IR_RUNTIME_EXECUTOR_PLAN_CACHE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/executor/bound_plan.h"

namespace ir {
namespace runtime {

/*!
 * \brief Plans by input signature. Thread-safe: a signature is bound once (other runs of it
 * wait for that bind; runs of other signatures do not), and a Workspace is used by one run
 * at a time. Workspaces are kept for reuse, so a plan holds as many as the most runs of it
 * that were ever in flight at once.
 */
class PlanCache {
  struct Slot;

 public:
  /*! \brief A plan checked out with a Workspace for one run; gives the Workspace back when destroyed. */
  class Lease {
   public:
    Lease(std::shared_ptr<Slot> slot, std::unique_ptr<Workspace> workspace, bool bound);
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    const BoundPlan& plan() const;
    const Workspace& workspace() const { return *workspace_; }
    /*! \brief True when this checkout bound the plan (a cache miss). */
    bool bound() const { return bound_; }

   private:
    std::shared_ptr<Slot> slot_;
    std::unique_ptr<Workspace> workspace_;
    bool bound_;
  };

  /*!
   * \brief The plan of `signature` with an idle Workspace (allocated on `device` when none is
   * idle); `bind` makes the plan on a miss. A failed bind is not cached: the next run retries.
   */
  Lease Checkout(const InputSignature& signature, const std::function<std::shared_ptr<BoundPlan>()>& bind,
                 Device device);

 private:
  std::mutex mutex_;
  std::map<InputSignature, std::shared_ptr<Slot>> slots_;
};

}  // namespace runtime
}  // namespace ir

#endif  // IR_RUNTIME_EXECUTOR_PLAN_CACHE_H_
