/*!
 * \file registration_errors.h
 * \brief Collects registration conflicts raised while an op library's initializers run.
 *
 * Throwing from a static initializer inside dlopen would terminate the process, so while a
 * RegistrationErrorScope is alive in a thread, conflicts are recorded instead of thrown.
 */
#ifndef IR_CORE_REGISTRATION_ERRORS_H_
#define IR_CORE_REGISTRATION_ERRORS_H_

#include <string>
#include <vector>

namespace ir {
namespace detail {

class RegistrationErrorScope {
 public:
  RegistrationErrorScope();
  ~RegistrationErrorScope();
  RegistrationErrorScope(const RegistrationErrorScope&) = delete;
  RegistrationErrorScope& operator=(const RegistrationErrorScope&) = delete;
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  friend void ReportRegistrationError(const std::string& message);
  std::vector<std::string> errors_;
  RegistrationErrorScope* previous_;
};

}  // namespace detail
}  // namespace ir

#endif  // IR_CORE_REGISTRATION_ERRORS_H_
