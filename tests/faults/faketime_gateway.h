#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tests/support/process.h"

namespace fencegate::faults {

// A fencegate whose wall clock is libfaketime's: read from `timestamp_file` (e.g. "+3650d",
// "-3650d") on every call, so a test jumps the clock mid-run by rewriting the file. The
// monotonic clock is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as on a real machine, where a
// wall-clock step (NTP, an operator, a VM resumed) never moves CLOCK_MONOTONIC.
struct FaketimeGateway {
  std::unique_ptr<integration::Process> process;
  std::uint16_t traffic_port = 0;
  std::uint16_t admin_port = 0;
};

// Started like GatewayInstance (ephemeral ports); nullptr with `error` if it did not come up.
std::unique_ptr<FaketimeGateway> StartUnderFaketime(const std::string& config_path,
                                                    const std::string& data_dir,
                                                    const std::string& timestamp_file,
                                                    std::string* error);

// Points the clock of every gateway reading `timestamp_file` at `offset` (libfaketime's
// relative syntax, e.g. "+3650d" or "-3650d").
void SetFakeOffset(const std::string& timestamp_file, const std::string& offset);

}  // namespace fencegate::faults
