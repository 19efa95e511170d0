/*!
 * \file plan_cache.cc
 * \brief PlanCache: bound plans by input signature, with per-run Workspaces.
 */
#include "runtime/executor/plan_cache.h"

#include <utility>

namespace ir {
namespace runtime {

/*! \brief One signature: its plan (bound once, under bind_mutex) and its idle Workspaces. */
struct PlanCache::Slot {
  std::mutex bind_mutex;
  std::shared_ptr<const BoundPlan> plan;
  std::mutex idle_mutex;
  std::vector<std::unique_ptr<Workspace>> idle;
};

PlanCache::Lease::Lease(std::shared_ptr<Slot> slot, std::unique_ptr<Workspace> workspace, bool bound)
    : slot_(std::move(slot)), workspace_(std::move(workspace)), bound_(bound) {}

PlanCache::Lease::~Lease() {
  if (slot_ == nullptr || workspace_ == nullptr) return;  // moved from
  std::lock_guard<std::mutex> lock(slot_->idle_mutex);
  slot_->idle.push_back(std::move(workspace_));
}

const BoundPlan& PlanCache::Lease::plan() const { return *slot_->plan; }

PlanCache::Lease PlanCache::Checkout(const InputSignature& signature,
                                     const std::function<std::shared_ptr<BoundPlan>()>& bind, Device device) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<Slot>& found = slots_[signature];
    if (found == nullptr) found = std::make_shared<Slot>();
    slot = found;
  }
  bool bound = false;
  {
    std::lock_guard<std::mutex> lock(slot->bind_mutex);
    if (slot->plan == nullptr) {
      slot->plan = bind();
      bound = true;
    }
  }
  std::unique_ptr<Workspace> workspace;
  {
    std::lock_guard<std::mutex> lock(slot->idle_mutex);
    if (!slot->idle.empty()) {
      workspace = std::move(slot->idle.back());
      slot->idle.pop_back();
    }
  }
  if (workspace == nullptr) workspace = AllocateWorkspace(*slot->plan, device);
  return Lease(std::move(slot), std::move(workspace), bound);
}

}  // namespace runtime
}  // namespace ir
