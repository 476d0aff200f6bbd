#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fencegate::integration {

// A child process whose stdout and stderr are drained by reader threads (so a chatty child
// never blocks on a full pipe) and kept for inspection: stdout as lines, stderr as text.
class Process {
 public:
  // Forks and execs argv[0] with `argv`. Returns nullptr and sets `error` on failure.
  static std::unique_ptr<Process> Start(const std::vector<std::string>& argv, std::string* error);

  // Kills (SIGKILL) and reaps the child if it still runs, then joins the readers.
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }

  // Waits up to `timeout` for a stdout line that `match` accepts and returns it. Lines seen
  // before the call count too.
  std::optional<std::string> WaitForStdoutLine(const std::function<bool(const std::string&)>& match,
                                               std::chrono::milliseconds timeout);
  // Waits until the child closed stdout and stderr (it exited, normally), so that StdoutLines()
  // and Stderr() are complete. False on timeout.
  bool WaitForOutputEnd(std::chrono::milliseconds timeout);
  // Waits up to `timeout` until stderr contains `text`: the child writes its log after it has
  // answered, and the reader thread may not have drained the pipe yet when the answer arrives.
  bool WaitForStderr(const std::string& text, std::chrono::milliseconds timeout);
  std::vector<std::string> StdoutLines() const;
  std::string Stderr() const;

  void Signal(int signal_number);

  // Waits up to `timeout` for the child to exit. Returns its exit status, 128 + N if killed by
  // signal N, or nullopt if it is still running.
  std::optional<int> Wait(std::chrono::milliseconds timeout);

  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status as Wait() does.
  int Stop(std::chrono::milliseconds grace);

  // The peak resident set size (VmHWM) in bytes; nullopt once the child has exited.
  std::optional<std::uint64_t> PeakResidentBytes() const;

 private:
  Process(pid_t pid, int stdout_fd, int stderr_fd);
  void ReadOutput(int fd, bool is_stdout);

  pid_t pid_;
  std::optional<int> exit_status_;
  mutable std::mutex mutex_;
  std::condition_variable output_changed_;
  std::vector<std::string> stdout_lines_;
  std::string stdout_partial_;
  std::string stderr_;
  int open_outputs_ = 2;
  std::thread stdout_reader_;
  std::thread stderr_reader_;
};

}  // namespace fencegate::integration
