/*!
 * \file guard_models.h
 * \brief How the verifier reads each guard a rule may name: the one table from guard names to
 * their meaning in a proof. A value guard (`positive(x)`) becomes an assumption on the
 * instance's symbolic elements; an instance guard (`last_axis(?a, x)`) is a fact about shapes
 * and attributes, which the registered guard itself decides on the test instance.
 */
#ifndef IR_TOOLS_RULES_VERIFY_GUARD_MODELS_H_
#define IR_TOOLS_RULES_VERIFY_GUARD_MODELS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "smt_model.h"

namespace ir {
namespace rules_verify {

/*! \brief The test instance a guard's arguments name. */
struct Instance {
  /*! \brief Variables' symbolic values. */
  std::map<std::string, SymTensor> values;
  /*! \brief Attribute variables' values ("?a" -> "-1"). */
  std::map<std::string, std::string> attrs;
};

/*! \brief The assumption a value guard makes about its arguments. */
using FAssume =
    std::function<z3::expr(SmtModel* model, const Instance& instance, const std::vector<std::string>& args)>;

/*! \brief One guard as the verifier reads it. */
struct GuardModel {
  /*! \brief Value guards: the assumption. Empty for instance guards. */
  FAssume assume;
};

/*! \brief The guard named `name` in the verifier's table, or nullptr when the verifier lacks it. */
const GuardModel* FindGuardModel(const std::string& name);

}  // namespace rules_verify
}  // namespace ir

#endif  // IR_TOOLS_RULES_VERIFY_GUARD_MODELS_H_
