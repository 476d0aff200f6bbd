#pragma once

#include <chrono>
#include <string>

#include "tests/support/process.h"
#include "tests/support/tls_client.h"

namespace fencegate::integration {

// Makes the certificates of tests/support/make_test_certs.sh (test CA, server certificate for
// localhost/127.0.0.1, client certificate, ...) in `dir`; false and *error when it fails.
// Inline: FENCEGATE_SOURCE_DIR is defined by each test target, not the support library.
inline bool MakeTestCerts(const std::string& dir, std::string* error) {
  auto script = Process::Start(
      {"/bin/bash", FENCEGATE_SOURCE_DIR "/tests/support/make_test_certs.sh", dir}, error);
  if (script == nullptr) return false;
  if (script->Wait(std::chrono::seconds(60)) != 0) {
    *error = "make_test_certs.sh failed: " + script->Stderr();
    return false;
  }
  return true;
}

// A client that trusts the test CA and presents certificate `name` (client, other_client, ...;
// none when empty).
inline TlsClientOptions TestClient(const std::string& dir, const std::string& name) {
  TlsClientOptions options;
  options.ca_file = dir + "/ca.pem";
  if (!name.empty()) {
    options.cert_file = dir + "/" + name + ".pem";
    options.key_file = dir + "/" + name + ".key";
  }
  return options;
}

}  // namespace fencegate::integration
