#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

namespace fencegate::gateway::auth {

// SHA-256 of a bearer API key. Only digests are configured or kept in memory, never keys.
using KeyDigest = std::array<unsigned char, 32>;

// One principal and every way it can prove itself (README "Authentication").
struct PrincipalConfig {
  std::string name;
  std::vector<KeyDigest> api_key_sha256;  // `Authorization: Bearer <key>` with SHA-256(key)
  // A verified client certificate whose subject (RFC 2253, exact) or subjectAltName matches.
  std::vector<std::string> tls_subjects;
  std::vector<std::string> tls_dns_sans;  // compared case-insensitively
  std::vector<std::string> tls_uri_sans;  // compared exactly (e.g. SPIFFE ids)
};

// The principals of one listener. `api_keys_file` entries ("NAME SHA256HEX" lines) are merged
// into `principals` by the loader.
struct CredentialsConfig {
  std::vector<PrincipalConfig> principals;
  std::string api_keys_file;
};

// The admin listener's own principals (never the traffic ones). Empty: the admin API is open.
struct AdminAuthConfig {
  CredentialsConfig credentials;
  bool metrics_public = false;  // /metrics without credentials
};

// Who may do what on one route. "*" in read/write: any authenticated principal. `advance` maps a
// principal (or "*") to the fence-key prefixes it may raise ("*": every key of the route).
struct RoutePolicyConfig {
  std::vector<std::string> read;
  std::vector<std::string> write;
  std::map<std::string, std::vector<std::string>> advance;
};

// Who may use the built-in lock API (config `locks.policy`; none: every client). `read`: who may
// GET a lock's state ("*": any authenticated principal). `acquire` maps a principal (or "*") to
// the lock-name patterns ('*' matches any run of characters) it may acquire, renew and release.
struct LockPolicyConfig {
  std::vector<std::string> read;
  std::map<std::string, std::vector<std::string>> acquire;
};

}  // namespace fencegate::gateway::auth
