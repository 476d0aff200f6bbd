#include "gateway/auth/console_sessions.h"

#include <openssl/rand.h>

#include <algorithm>
#include <array>

#include "base/encoding/hex.h"
#include "base/encoding/sha256.h"

namespace fencegate::gateway::auth {
namespace {

// 128 random bits as 32 lower-case hex digits; nullopt when the CSPRNG fails.
std::optional<std::string> RandomHex128() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) return std::nullopt;
  return encoding::HexEncode(bytes);
}

}  // namespace

ConsoleSessions::ConsoleSessions(std::chrono::seconds lifetime, std::size_t max_sessions)
    : lifetime_(lifetime), max_sessions_(std::max<std::size_t>(max_sessions, 1)) {}

std::optional<std::string> ConsoleSessions::Create(std::string principal, Clock::time_point now) {
  std::optional<std::string> id = RandomHex128();
  std::optional<std::string> csrf = RandomHex128();
  if (!id || !csrf) return std::nullopt;
  std::erase_if(sessions_, [now](const auto& entry) { return entry.second.expires <= now; });
  if (sessions_.size() >= max_sessions_) {
    sessions_.erase(std::min_element(
        sessions_.begin(), sessions_.end(),
        [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; }));
  }
  sessions_.insert_or_assign(encoding::Sha256Of(*id),
                             Session{std::move(principal), std::move(*csrf), now + lifetime_});
  return id;
}

const ConsoleSessions::Session* ConsoleSessions::Find(std::string_view id, Clock::time_point now) {
  if (id.empty()) return nullptr;
  const auto found = sessions_.find(encoding::Sha256Of(id));
  if (found == sessions_.end()) return nullptr;
  if (found->second.expires <= now) {
    sessions_.erase(found);
    return nullptr;
  }
  return &found->second;
}

void ConsoleSessions::Remove(std::string_view id) { sessions_.erase(encoding::Sha256Of(id)); }

std::string_view CookieValue(std::string_view cookie_header, std::string_view name) {
  while (!cookie_header.empty()) {
    const auto semicolon = cookie_header.find(';');
    std::string_view pair = cookie_header.substr(0, semicolon);
    cookie_header = semicolon == std::string_view::npos ? std::string_view{}
                                                        : cookie_header.substr(semicolon + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const auto equals = pair.find('=');
    if (equals != std::string_view::npos && pair.substr(0, equals) == name) {
      return pair.substr(equals + 1);
    }
  }
  return {};
}

}  // namespace fencegate::gateway::auth
