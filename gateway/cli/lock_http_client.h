#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace fencegate::gateway::lock_client {

// A parsed "http://HOST[:PORT][/PATH]" of the lock API (PATH defaults to "/locks/").
struct LockApiUrl {
  std::string host;
  std::uint16_t port = 80;
  std::string prefix = "/locks/";  // always ends with '/'
};
bool ParseLockApiUrl(const std::string& text, LockApiUrl* out, std::string* error);

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After field, if any
};

// One POST on a fresh connection, with a deadline for the whole exchange (Beast, driven by a
// private io_context), sending `api_key` (unless empty) as Authorization: Bearer. nullopt, with
// `error` set, if the exchange failed or timed out.
std::optional<HttpAnswer> Post(const LockApiUrl& url, const std::string& api_key,
                               const std::string& target, const std::string& json_body,
                               std::chrono::milliseconds timeout, std::string* error);

}  // namespace fencegate::gateway::lock_client
