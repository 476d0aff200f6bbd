#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fencegate::gateway::auth {

// The browser console's logins (POST /ui/login): a session id in an HttpOnly cookie stands for
// the admin principal whose key was typed, for a bounded time. Ids and CSRF tokens are 128 bits
// from OpenSSL's CSPRNG; only the SHA-256 of an id is kept, so lookups do not compare secrets
// byte by byte. Bounded: the session closest to expiry gives way when `max_sessions` are open.
// Used by the admin listener's one thread only (no locking).
class ConsoleSessions {
 public:
  using Clock = std::chrono::steady_clock;

  struct Session {
    std::string principal;
    std::string csrf_token;  // required as X-CSRF-Token on the session's POSTs
    Clock::time_point expires;
  };

  ConsoleSessions(std::chrono::seconds lifetime, std::size_t max_sessions);

  // A new session for `principal`; its id (32 hex digits), or nullopt when the CSPRNG failed.
  std::optional<std::string> Create(std::string principal, Clock::time_point now);
  // The live session `id` names; null when unknown or expired (an expired one is dropped).
  const Session* Find(std::string_view id, Clock::time_point now);
  void Remove(std::string_view id);

  std::chrono::seconds lifetime() const { return lifetime_; }
  std::size_t size() const { return sessions_.size(); }

 private:
  std::chrono::seconds lifetime_;
  std::size_t max_sessions_;
  std::map<std::string, Session, std::less<>> sessions_;  // by SHA-256 of the id
};

// The value of cookie `name` in a Cookie header field (RFC 6265 "name=value; name2=value2"), or
// empty.
std::string_view CookieValue(std::string_view cookie_header, std::string_view name);

}  // namespace fencegate::gateway::auth
