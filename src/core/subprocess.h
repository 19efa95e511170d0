/*!
 * \file subprocess.h
 * \brief Runs an external program (a compiler) from an argument vector: no shell, output
 * captured, killed with its whole process group when it overruns a deadline.
 */
#ifndef IR_CORE_SUBPROCESS_H_
#define IR_CORE_SUBPROCESS_H_

#include <string>
#include <vector>

namespace ir {

/*! \brief How a program run by RunProcess ended. */
struct ProcessResult {
  /*! \brief Exit status; -1 when the program did not exit normally (a signal, a timeout). */
  int exit_code = -1;
  /*! \brief True when the program was not found or could not be executed. */
  bool not_found = false;
  /*! \brief True when the program overran the timeout and its process group was killed. */
  bool timed_out = false;
  /*! \brief Everything the program wrote to stdout and stderr, interleaved. */
  std::string output;
};

/*!
 * \brief Runs argv[0] (searched in PATH when it has no '/') with arguments argv, without a
 * shell: no word splitting, globbing or quoting applies to any argument. stdin is /dev/null.
 * The program runs in a new process group; when it is still running after `timeout_seconds`
 * the whole group is killed with SIGKILL and reaped. Throws ir::Error only when the process
 * cannot be created at all (no pipe, no fork).
 */
ProcessResult RunProcess(const std::vector<std::string>& argv, double timeout_seconds);

/*! \brief The argument vector as one line for messages (arguments with spaces are quoted). */
std::string DescribeCommand(const std::vector<std::string>& argv);

}  // namespace ir

#endif  // IR_CORE_SUBPROCESS_H_
