/*!
 * \file subprocess.cc
 * \brief RunProcess: posix_spawnp with an argument vector, a pipe for stdout+stderr, a
 * deadline enforced on the whole process group.
 *
 * No shell is involved, so nothing in an argument (a TMPDIR with spaces or `;cmd;`) is ever
 * interpreted. The child gets its own process group so that a compiler driver and the
 * programs it started (cc1, as, ld) die together on timeout.
 */
#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "ir/base.h"

extern char** environ;

namespace ir {
namespace {

using Clock = std::chrono::steady_clock;

// Compiler logs beyond this are dropped (still drained so the compiler never blocks on them).
constexpr size_t kMaxOutputBytes = 1 << 20;

/*! \brief posix_spawn attributes and file actions, destroyed on every path. */
class SpawnSetup {
 public:
  explicit SpawnSetup(int write_fd) {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
    sigset_t signals;
    sigemptyset(&signals);
    posix_spawnattr_setsigmask(&attr_, &signals);
    // Hosts such as Python ignore SIGPIPE; the compiler should get the default behaviour.
    sigaddset(&signals, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr_, &signals);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, write_fd, 1);
    posix_spawn_file_actions_adddup2(&actions_, write_fd, 2);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

int MillisecondsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// Reads the child's output until end of file; false when the deadline passed first.
bool DrainOutput(int fd, Clock::time_point deadline, std::string* output) {
  char buf[4096];
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(&pfd, 1, MillisecondsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    size_t room = kMaxOutputBytes - std::min(kMaxOutputBytes, output->size());
    output->append(buf, std::min(room, static_cast<size_t>(n)));
  }
}

// Waits for the child to exit; false when the deadline passed first. Sets *status.
bool WaitUntil(pid_t pid, Clock::time_point deadline, int* status) {
  for (;;) {
    pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) return true;
    if (done < 0 && errno != EINTR) {
      *status = -1;  // SIGCHLD ignored by the host: the exit status is lost
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string DescribeCommand(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    line += arg.find_first_of(" \t\n'\";$&|<>") == std::string::npos ? arg : "'" + arg + "'";
  }
  return line;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, double timeout_seconds) {
  IR_CHECK(!argv.empty() && !argv[0].empty()) << "RunProcess: no program to run";
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int fds[2];
  IR_CHECK(pipe2(fds, O_CLOEXEC) == 0) << "cannot create a pipe to run '" << argv[0] << "': " << std::strerror(errno);
  pid_t pid = -1;
  int rc;
  {
    SpawnSetup setup(fds[1]);
    rc = posix_spawnp(&pid, args[0], setup.actions(), setup.attr(), args.data(), environ);
  }
  close(fds[1]);
  ProcessResult result;
  if (rc != 0) {
    close(fds[0]);
    IR_CHECK(rc == ENOENT || rc == EACCES || rc == ENOEXEC || rc == ENOTDIR)
        << "cannot start '" << argv[0] << "': " << std::strerror(rc);
    result.not_found = true;
    result.output = std::strerror(rc);
    return result;
  }
  // Clamped to a year: converting a larger double to the clock's integer ticks overflows.
  double seconds = std::min(std::max(0.0, timeout_seconds), 365.0 * 24 * 3600);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  bool finished = DrainOutput(fds[0], deadline, &result.output);
  close(fds[0]);
  int status = 0;
  if (!finished || !WaitUntil(pid, deadline, &status)) {
    kill(-pid, SIGKILL);  // the group still exists: its leader is not reaped yet
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    result.timed_out = true;
    return result;
  }
  result.exit_code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace ir
