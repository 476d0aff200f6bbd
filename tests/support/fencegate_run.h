#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/gateway_instance.h"
#include "tests/support/process.h"

namespace fencegate::integration {

// The binary run to its end: --check-config, or a start-up that must fail.
struct Finished {
  int status = -1;  // -1: it did not start, or was still running after the timeout
  std::string stdout_text;
  std::string stderr_text;
};

// Runs FencegateBinary() with `args` and waits up to `timeout` for its exit and its output;
// records a gtest failure when it cannot start or does not finish in time.
inline Finished RunFencegate(const std::vector<std::string>& args,
                             std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  std::vector<std::string> argv = {FencegateBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string error;
  std::unique_ptr<Process> process = Process::Start(argv, &error);
  Finished finished;
  if (!process) {
    ADD_FAILURE() << error;
    return finished;
  }
  std::optional<int> status = process->Wait(timeout);
  EXPECT_TRUE(status.has_value()) << "still running";
  finished.status = status.value_or(-1);
  EXPECT_TRUE(process->WaitForOutputEnd(timeout));
  for (const std::string& line : process->StdoutLines()) finished.stdout_text += line + "\n";
  finished.stderr_text = process->Stderr();
  return finished;
}

}  // namespace fencegate::integration
