/*!
 * \file registration_transaction.h
 * \brief Stages the registrations an op library makes while it loads, so they apply all or none.
 *
 * A library registers from static initializers, which run inside dlopen where nothing may
 * throw, one at a time, before the loader can judge the library as a whole. While a
 * transaction is active in a thread, Op::Register hands that thread staged ops (a copy of an
 * existing op, or a new op not yet listed), attribute updates go to staged copies of the
 * attribute maps and conflicts are recorded instead of thrown. Finish() then checks that no
 * existing op lost its signature, description or parameters and applies everything, or
 * applies nothing and returns the conflicts.
 */
#ifndef IR_CORE_REGISTRATION_TRANSACTION_H_
#define IR_CORE_REGISTRATION_TRANSACTION_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "ir/op.h"

namespace ir {
namespace detail {

class RegistrationTransaction {
 public:
  /*! \brief Starts staging the registrations this thread makes. */
  RegistrationTransaction();
  ~RegistrationTransaction();
  RegistrationTransaction(const RegistrationTransaction&) = delete;
  RegistrationTransaction& operator=(const RegistrationTransaction&) = delete;

  /*! \brief The transaction active in this thread, or nullptr. */
  static RegistrationTransaction* Current();
  /*! \brief Stops staging in this thread; the staged registrations wait for Finish(). */
  void Deactivate();

  /*! \brief The staged op `name`: a copy of the registered op, or a new one. */
  Op& Register(const std::string& name);
  /*! \brief A new op or alias staged under `name`, or nullptr. */
  const Op* FindStaged(const std::string& name) const;
  /*! \brief Stages `alias` as another name of staged op `op`. */
  void AddAlias(Op& op, const std::string& alias);
  /*! \brief The staged map of `key`, or nullptr when this library has not set it. */
  OpMapBase* StagedMap(const std::string& key) const;
  /*! \brief Runs `update` on the staged map of `key` (a copy of the registered one, or new). */
  void SetAttr(const Op& op, const std::string& key, const std::type_info& type,
               const std::function<OpMapBase*()>& create, const std::function<void(OpMapBase*)>& update);
  /*! \brief Records a conflict; Finish() will then apply nothing. */
  void ReportError(const std::string& message) { errors_.push_back(message); }
  /*!
   * \brief Runs `apply` when Finish() applies the library's registrations (never when it
   * applies none): how registries outside the op registry stage a library's entries.
   */
  void OnApply(std::function<void()> apply) { on_apply_.push_back(std::move(apply)); }

  /*! \brief Applies every staged registration and returns {}, or applies none and returns why. */
  std::vector<std::string> Finish();

 private:
  /*! \brief A registered op as the library redeclared it; only new attributes may differ. */
  struct Redeclared {
    Op* real;
    std::unique_ptr<Op> staged;
  };
  std::vector<std::string> Conflicts() const;
  Op* Staged(const std::string& name) const;
  /*! \brief The registered op a staged one stands for (a new op stands for itself). */
  Op* Target(Op* staged) const;

  RegistrationTransaction* previous_ = nullptr;
  bool active_ = false;
  uint32_t base_ = 0;  // registered ops when staging began; new ops get indices from here
  std::map<std::string, Redeclared> redeclared_;
  std::vector<std::unique_ptr<Op>> new_ops_;
  std::map<std::string, Op*> aliases_;
  std::map<std::string, std::unique_ptr<OpMapBase>> maps_;
  std::vector<std::string> errors_;
  std::vector<std::function<void()>> on_apply_;
};

}  // namespace detail
}  // namespace ir

#endif  // IR_CORE_REGISTRATION_TRANSACTION_H_
