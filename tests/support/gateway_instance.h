#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace fencegate::integration {

// The path of the fencegate binary under test. Defined by the test executable
// (fencegate_binary.cc), which is built knowing where CMake put the binary.
std::string FencegateBinary();

// A running fencegate, started on ephemeral ports:
//   fencegate --config FILE --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 --data-dir DIR
// and considered up once it printed "fencegate listening traffic=HOST:PORT admin=HOST:PORT".
class GatewayInstance {
 public:
  // Returns nullptr and sets `error` (with the child's stderr) if the gateway did not come up
  // within `timeout`. `extra_args` follow the ones above.
  static std::unique_ptr<GatewayInstance> Start(
      const std::string& config_path, const std::string& data_dir, std::string* error,
      std::chrono::milliseconds timeout = std::chrono::seconds(15),
      const std::vector<std::string>& extra_args = {});

  std::uint16_t traffic_port() const { return traffic_port_; }
  std::uint16_t admin_port() const { return admin_port_; }
  Process& process() { return *process_; }

 private:
  GatewayInstance(std::unique_ptr<Process> process, std::uint16_t traffic_port,
                  std::uint16_t admin_port)
      : process_(std::move(process)), traffic_port_(traffic_port), admin_port_(admin_port) {}

  std::unique_ptr<Process> process_;
  std::uint16_t traffic_port_;
  std::uint16_t admin_port_;
};

// Parses "fencegate listening traffic=HOST:PORT admin=HOST:PORT" into the two ports.
bool ParseListeningLine(const std::string& line, std::uint16_t* traffic_port,
                        std::uint16_t* admin_port);

}  // namespace fencegate::integration
