#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/webdav/apache_dav.h"

namespace fencegate::webdav_test {

// A fencegate with its own data dir and fence store.
struct Gateway {
  integration::TempDir dir;
  std::unique_ptr<integration::GatewayInstance> instance;
  std::uint16_t port() const { return instance->traffic_port(); }
};

// One fenced route /dav/ (fence key per first path segment, fenced methods PUT, DELETE, MOVE,
// COPY, MKCOL) to the webdav backend "dav" at `url` (its condition probes under
// /dav/.fencegate-probe/), with `extra_backend_keys` (a map) in it.
integration::GatewayConfig DavGatewayConfig(const std::string& url,
                                            const YAML::Node& extra_backend_keys = YAML::Node());
// Returns once the gateway has reported the verdict of its first condition probe of "dav" (see
// WaitForConditionProbe in webdav_support.cc), so the probe's requests never overlap a test's.
std::unique_ptr<Gateway> StartGateway(const integration::GatewayConfig& config, std::string* error);
// DavGatewayConfig for the plain-HTTP Apache on `dav_port`.
std::unique_ptr<Gateway> StartGateway(std::uint16_t dav_port, std::string* error,
                                      const YAML::Node& extra_backend_keys = YAML::Node());

// The webdav backend's keys for `attempts` LOCKs `retry_delay` apart.
YAML::Node LockRetries(int attempts, const std::string& retry_delay);

// A fresh Apache for each test (skipped where apache2 is missing) and gateways in front of it.
class ApacheDavTest : public ::testing::Test {
 protected:
  // Starts Apache, then `count` gateways with `extra_backend_keys` in their webdav backend.
  void StartApacheAndGateways(int count, const YAML::Node& extra_backend_keys);
  // On a failure, what Apache saw (its access log's last lines and its error log): a test that
  // fails once in a hundred runs is explained by the order of the requests at the server.
  void TearDown() override;
  std::uint16_t dav() const { return apache_->port(); }
  // What Apache answers a PROPPATCH of `path` sent straight to it without a lock token: 423
  // while a lock is held on it, 207 once it is written.
  unsigned UnconditionalWriteStatus(const std::string& path);

  std::unique_ptr<ApacheDav> apache_;
  std::vector<std::unique_ptr<Gateway>> gateways_;  // after apache_: stopped before it
};

// `method` on `path` with Fencing-Token `token`, and a Destination for COPY and MOVE.
integration::Request Fenced(integration::http::verb method, const std::string& path,
                            std::uint64_t token, std::string body = {},
                            const std::string& destination = {});

// A request through the gateway (or straight to Apache) on a fresh connection.
integration::Response Send(std::uint16_t port, integration::Request request);

// The fencing-token property Apache keeps for `path`, read with PROPFIND straight from Apache;
// nullopt when absent.
std::optional<std::uint64_t> StoredToken(std::uint16_t dav_port, const std::string& path);

// The "type" member of a problem+json body, "" when there is none.
std::string ProblemType(const std::string& body);
std::string ProblemReason(const std::string& body);

// One access-log line of Apache (see ApacheDav).
struct LogLine {
  std::string method;
  std::string path;
  unsigned status = 0;
  std::optional<std::uint64_t> write_token;  // the X-Write-Token header
  std::uint64_t begin_usec = 0;
  unsigned remote_port = 0;       // the client's port: one connection each, at a time
  unsigned earlier_requests = 0;  // requests the connection carried before this one
};
std::vector<LogLine> ReadAccessLog(const std::string& path);

}  // namespace fencegate::webdav_test
