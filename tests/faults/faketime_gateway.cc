#include "tests/faults/faketime_gateway.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/support/gateway_instance.h"

namespace fencegate::faults {
namespace {

// Debian's package "faketime" (libfaketime) puts it here; the MT variant is the one that is
// safe in a multithreaded process.
constexpr char kLibFaketime[] = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

}  // namespace

std::unique_ptr<FaketimeGateway> StartUnderFaketime(const std::string& config_path,
                                                    const std::string& data_dir,
                                                    const std::string& timestamp_file,
                                                    std::string* error) {
  if (!std::filesystem::exists(kLibFaketime)) {
    *error = std::string(kLibFaketime) + " is missing: scripts/install-deps.sh installs faketime";
    return nullptr;
  }
  auto gateway = std::make_unique<FaketimeGateway>();
  gateway->process = integration::Process::Start(
      {"/usr/bin/env", std::string("LD_PRELOAD=") + kLibFaketime,
       "FAKETIME_TIMESTAMP_FILE=" + timestamp_file, "FAKETIME_NO_CACHE=1",
       "FAKETIME_DONT_FAKE_MONOTONIC=1", integration::FencegateBinary(), "--config", config_path,
       "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", data_dir},
      error);
  if (!gateway->process) return nullptr;
  std::optional<std::string> line = gateway->process->WaitForStdoutLine(
      [&](const std::string& candidate) {
        return integration::ParseListeningLine(candidate, &gateway->traffic_port,
                                               &gateway->admin_port);
      },
      std::chrono::seconds(15));
  if (!line) {
    *error =
        "fencegate under faketime did not report listening; stderr:\n" + gateway->process->Stderr();
    return nullptr;
  }
  return gateway;
}

void SetFakeOffset(const std::string& timestamp_file, const std::string& offset) {
  // Written aside and renamed, so the gateway never reads a half-written file.
  const std::string temporary = timestamp_file + ".new";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << offset << '\n';
  }
  std::filesystem::rename(temporary, timestamp_file);
}

}  // namespace fencegate::faults
