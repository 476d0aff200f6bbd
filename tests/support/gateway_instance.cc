#include "tests/support/gateway_instance.h"

#include <regex>

namespace fencegate::integration {

bool ParseListeningLine(const std::string& line, std::uint16_t* traffic_port,
                        std::uint16_t* admin_port) {
  static const std::regex kPattern(
      R"(^fencegate listening traffic=(\S+):(\d+) admin=(\S+):(\d+)$)");
  std::smatch match;
  if (!std::regex_match(line, match, kPattern)) return false;
  *traffic_port = static_cast<std::uint16_t>(std::stoul(match[2]));
  *admin_port = static_cast<std::uint16_t>(std::stoul(match[4]));
  return true;
}

std::unique_ptr<GatewayInstance> GatewayInstance::Start(
    const std::string& config_path, const std::string& data_dir, std::string* error,
    std::chrono::milliseconds timeout, const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {FencegateBinary(), "--config",    config_path,
                                   "--listen",        "127.0.0.1:0", "--admin-listen",
                                   "127.0.0.1:0",     "--data-dir",  data_dir};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::unique_ptr<Process> process = Process::Start(argv, error);
  if (!process) return nullptr;
  std::uint16_t traffic = 0;
  std::uint16_t admin = 0;
  std::optional<std::string> line = process->WaitForStdoutLine(
      [&](const std::string& candidate) { return ParseListeningLine(candidate, &traffic, &admin); },
      timeout);
  if (!line) {
    std::optional<int> status = process->Wait(std::chrono::milliseconds(0));
    *error = "fencegate did not report listening (" +
             (status ? "exited with " + std::to_string(*status) : std::string("still running")) +
             "); stderr:\n" + process->Stderr();
    return nullptr;
  }
  return std::unique_ptr<GatewayInstance>(new GatewayInstance(std::move(process), traffic, admin));
}

}  // namespace fencegate::integration
