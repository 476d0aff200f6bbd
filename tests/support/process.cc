#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/support/eventually.h"

namespace fencegate::integration {

namespace {

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::unique_ptr<Process> Process::Start(const std::vector<std::string>& argv, std::string* error) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe2: ") + std::strerror(errno);
    return nullptr;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    *error = std::string("pipe2: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return nullptr;
  }
  // Built before fork: between fork and exec only async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    return nullptr;
  }
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    // The test process holds sockets (fixture backends, clients) the child must not inherit.
    close_range(3, ~0u, 0);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  return std::unique_ptr<Process>(new Process(pid, out_pipe[0], err_pipe[0]));
}

Process::Process(pid_t pid, int stdout_fd, int stderr_fd) : pid_(pid) {
  stdout_reader_ = std::thread([this, stdout_fd] { ReadOutput(stdout_fd, true); });
  stderr_reader_ = std::thread([this, stderr_fd] { ReadOutput(stderr_fd, false); });
}

Process::~Process() {
  if (!exit_status_) {
    kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(10));
  }
  stdout_reader_.join();
  stderr_reader_.join();
}

// Collects what `fd` delivers until EOF; stdout is also cut into lines for WaitForStdoutLine.
void Process::ReadOutput(int fd, bool is_stdout) {
  char buffer[8192];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::lock_guard lock(mutex_);
    if (!is_stdout) {
      stderr_.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    stdout_partial_.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t newline = stdout_partial_.find('\n'); newline != std::string::npos;
         newline = stdout_partial_.find('\n')) {
      stdout_lines_.push_back(stdout_partial_.substr(0, newline));
      stdout_partial_.erase(0, newline + 1);
    }
    output_changed_.notify_all();
  }
  close(fd);
  std::lock_guard lock(mutex_);
  if (is_stdout && !stdout_partial_.empty()) stdout_lines_.push_back(std::move(stdout_partial_));
  --open_outputs_;
  output_changed_.notify_all();
}

std::optional<std::string> Process::WaitForStdoutLine(
    const std::function<bool(const std::string&)>& match, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  std::size_t checked = 0;
  for (;;) {
    for (; checked < stdout_lines_.size(); ++checked) {
      if (match(stdout_lines_[checked])) return stdout_lines_[checked];
    }
    if (output_changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        checked == stdout_lines_.size()) {
      return std::nullopt;
    }
  }
}

bool Process::WaitForOutputEnd(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return output_changed_.wait_for(lock, timeout, [this] { return open_outputs_ == 0; });
}

bool Process::WaitForStderr(const std::string& text, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return output_changed_.wait_for(lock, timeout, [&] {
    return stderr_.find(text) != std::string::npos || open_outputs_ == 0;
  }) && stderr_.find(text) != std::string::npos;
}

std::vector<std::string> Process::StdoutLines() const {
  std::lock_guard lock(mutex_);
  return stdout_lines_;
}

std::string Process::Stderr() const {
  std::lock_guard lock(mutex_);
  return stderr_;
}

void Process::Signal(int signal_number) {
  if (!exit_status_) kill(pid_, signal_number);
}

std::optional<int> Process::Wait(std::chrono::milliseconds timeout) {
  if (exit_status_) return exit_status_;
  bool reap_failed = false;
  Eventually(
      [&] {
        int status = 0;
        const pid_t reaped = waitpid(pid_, &status, WNOHANG);
        if (reaped == pid_) exit_status_ = DecodeWaitStatus(status);
        reap_failed = reaped < 0 && errno != EINTR;
        return exit_status_.has_value() || reap_failed;
      },
      timeout);
  return exit_status_;
}

int Process::Stop(std::chrono::milliseconds grace) {
  Signal(SIGTERM);
  if (std::optional<int> status = Wait(grace)) return *status;
  Signal(SIGKILL);
  return Wait(std::chrono::seconds(10)).value_or(-1);
}

std::optional<std::uint64_t> Process::PeakResidentBytes() const {
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace fencegate::integration
