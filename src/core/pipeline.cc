/*!
 * \file pipeline.cc
 * \brief The pipeline registry: named pass lists, staged while an op library loads.
 */
#include "ir/pipeline.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "core/registration_transaction.h"
#include "ir/pass.h"

namespace ir {

namespace {

using Steps = std::vector<PipelineStep>;

/*! \brief What one loading library changed: the pipelines it touched, as they will be. */
struct Staged {
  std::map<std::string, Steps> pipelines;
  std::set<std::string> touched;
};

struct PipelineRegistry {
  std::mutex mutex;
  std::map<std::string, Steps> pipelines;
  /*!
   * \brief The staged changes of each active transaction. The transaction's apply callback owns
   * them: a library whose registrations are dropped drops them too (the entry then expires).
   */
  std::map<const detail::RegistrationTransaction*, std::weak_ptr<Staged>> staged;
  static PipelineRegistry* Global() {
    static PipelineRegistry* registry = new PipelineRegistry();
    return registry;
  }
};

std::string Known(const std::map<std::string, Steps>& pipelines) {
  std::vector<std::string> names;
  for (const auto& kv : pipelines) names.push_back(kv.first);
  return names.empty() ? std::string("none") : Join(names, ", ");
}

/*!
 * \brief Runs `edit` (of pipeline `name`) on the pipelines as the caller sees them: the registered ones, or, while an
 * op library loads in this thread, its staged copy (applied with its other registrations). An error `edit` returns is
 * thrown, or reported to the loading library's transaction.
 */
void Edit(const std::string& name, const std::function<std::string(std::map<std::string, Steps>*)>& edit) {
  PipelineRegistry* reg = PipelineRegistry::Global();
  detail::RegistrationTransaction* transaction = detail::RegistrationTransaction::Current();
  std::string error;
  {
    std::lock_guard<std::mutex> lock(reg->mutex);
    if (transaction == nullptr) {
      error = edit(&reg->pipelines);
    } else {
      std::shared_ptr<Staged> staged = reg->staged[transaction].lock();
      if (!staged) {
        staged = std::make_shared<Staged>();
        staged->pipelines = reg->pipelines;
        reg->staged[transaction] = staged;
        transaction->OnApply([staged] {
          PipelineRegistry* registry = PipelineRegistry::Global();
          std::lock_guard<std::mutex> apply_lock(registry->mutex);
          for (const std::string& touched : staged->touched) registry->pipelines[touched] = staged->pipelines[touched];
          for (auto it = registry->staged.begin(); it != registry->staged.end();) {
            it = it->second.lock() == staged || it->second.expired() ? registry->staged.erase(it) : std::next(it);
          }
        });
      }
      error = edit(&staged->pipelines);
      if (error.empty()) staged->touched.insert(name);
    }
  }
  if (error.empty()) return;
  if (transaction == nullptr) throw Error(error);
  transaction->ReportError(error);
}

void Insert(const std::string& name, const std::string& anchor, PipelineStep step, bool after) {
  Edit(name, [&](std::map<std::string, Steps>* pipelines) -> std::string {
    auto it = pipelines->find(name);
    if (it == pipelines->end()) {
      return StrCat("cannot insert pass '", step.pass, "' into unknown pipeline '", name,
                    "' (registered: ", Known(*pipelines), ")");
    }
    Steps& steps = it->second;
    auto at = std::find_if(steps.begin(), steps.end(), [&](const PipelineStep& s) { return s.pass == anchor; });
    if (at == steps.end()) {
      return StrCat("cannot insert pass '", step.pass, "' ", after ? "after" : "before", " '", anchor, "': pipeline '",
                    name, "' has no such pass");
    }
    steps.insert(after ? std::next(at) : at, std::move(step));
    return "";
  });
}

}  // namespace

Pipeline::Pipeline(const std::string& name) : name_(name) {
  PipelineRegistry* reg = PipelineRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto it = reg->pipelines.find(name);
  if (it == reg->pipelines.end()) {
    throw Error(StrCat("unknown pipeline '", name, "' (registered: ", Known(reg->pipelines), ")"));
  }
  steps_ = it->second;
}

std::vector<std::string> Pipeline::Passes(const std::map<std::string, bool>& options) const {
  std::vector<std::string> registered = PassReg::ListNames();
  std::vector<std::string> passes;
  for (const PipelineStep& step : steps_) {
    if (!step.condition.empty()) {
      auto option = options.find(step.condition);
      if (option == options.end() || !option->second) continue;
    }
    if (step.if_registered && std::find(registered.begin(), registered.end(), step.pass) == registered.end()) {
      continue;
    }
    passes.push_back(step.pass);
  }
  return passes;
}

std::string Pipeline::ToString() const {
  std::ostringstream os;
  os << name_ << ":";
  for (size_t i = 0; i < steps_.size(); ++i) {
    const PipelineStep& step = steps_[i];
    os << (i == 0 ? " " : ", ") << step.pass;
    std::vector<std::string> when;
    if (!step.condition.empty()) when.push_back("if " + step.condition);
    if (step.if_registered) when.push_back("if registered");
    if (!when.empty()) os << " [" << Join(when, ", ") << "]";
  }
  return os.str();
}

void Pipeline::Register(const std::string& name, std::vector<PipelineStep> steps) {
  Edit(name, [&](std::map<std::string, Steps>* pipelines) -> std::string {
    if (name.empty()) return "a pipeline needs a name";
    if (pipelines->count(name)) return StrCat("pipeline '", name, "' is registered twice");
    (*pipelines)[name] = std::move(steps);
    return "";
  });
}

void Pipeline::InsertAfter(const std::string& name, const std::string& anchor, PipelineStep step) {
  Insert(name, anchor, std::move(step), true);
}

void Pipeline::InsertBefore(const std::string& name, const std::string& anchor, PipelineStep step) {
  Insert(name, anchor, std::move(step), false);
}

std::vector<std::string> Pipeline::ListNames() {
  PipelineRegistry* reg = PipelineRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  std::vector<std::string> names;
  for (const auto& kv : reg->pipelines) names.push_back(kv.first);
  return names;
}

std::ostream& operator<<(std::ostream& os, const Pipeline& pipeline) { return os << pipeline.ToString(); }

}  // namespace ir
