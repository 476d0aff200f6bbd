#include "gateway/admin/admin_console.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <optional>
#include <string>

#include <boost/json.hpp>

#include "base/encoding/percent.h"
#include "gateway/console/console_assets.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

constexpr std::string_view kConsoleRoot = "/ui/";
constexpr std::string_view kConsoleLoginPath = "/ui/login";
constexpr std::string_view kConsoleLogoutPath = "/ui/logout";
constexpr std::string_view kConsoleSessionPath = "/ui/session";
constexpr std::string_view kConsoleCookie = "fencegate_session";

// The value of `name` in an application/x-www-form-urlencoded body ('+' is a space), or
// nullopt when absent or badly encoded.
std::optional<std::string> ConsoleFormField(std::string_view body, std::string_view name) {
  while (!body.empty()) {
    const auto amp = body.find('&');
    const std::string_view pair = body.substr(0, amp);
    body = amp == std::string_view::npos ? std::string_view{} : body.substr(amp + 1);
    const auto equals = pair.find('=');
    if (equals == std::string_view::npos || pair.substr(0, equals) != name) continue;
    std::string value(pair.substr(equals + 1));
    std::replace(value.begin(), value.end(), '+', ' ');
    return encoding::PercentDecode(value);
  }
  return std::nullopt;
}

void RedirectConsole(http::status status, std::string_view location, AdminResponse* response) {
  response->result(status);
  response->set(http::field::location, location);
  response->set(http::field::cache_control, "no-store");
  SetConsoleSecurityHeaders(response);
}

void ConsoleMethodNotAllowed(std::string_view allow, std::string_view path,
                             AdminResponse* response) {
  SetProblem(Refusal::kMethodNotAllowed, "this console resource allows " + std::string(allow), path,
             response);
  response->set(http::field::allow, allow);
}

bool IsConsoleReadMethod(http::verb method) {
  return method == http::verb::get || method == http::verb::head;
}

}  // namespace

void SetConsoleSecurityHeaders(AdminResponse* response) {
  response->set("Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                "frame-ancestors 'none'");
  response->set("X-Content-Type-Options", "nosniff");
  response->set(http::field::x_frame_options, "DENY");
  response->set("Referrer-Policy", "no-referrer");
}

bool AdminConsole::IsPublicPath(std::string_view path) {
  return path == "/" || path == "/ui" ||
         (path.starts_with(kConsoleRoot) && path != kConsoleSessionPath &&
          path != kConsoleLogoutPath);
}

void AdminConsole::HandlePublic(const Request& request, std::string_view path,
                                const auth::AdminGuard& guard, AdminResponse* response) {
  if (path == kConsoleLoginPath) {
    if (request.method() != http::verb::post) {
      ConsoleMethodNotAllowed("POST", path, response);
      return;
    }
    Login(request, guard, response);
    return;
  }
  if (!IsConsoleReadMethod(request.method())) {
    ConsoleMethodNotAllowed("GET, HEAD", path, response);
    return;
  }
  if (path == "/" || path == "/ui") {
    RedirectConsole(http::status::found, kConsoleRoot, response);
    return;
  }
  const ConsoleAsset* asset = FindConsoleAsset(path);
  if (asset == nullptr) {
    SetProblem(Refusal::kNotFound, "no such console file", path, response);
    return;
  }
  SetConsoleSecurityHeaders(response);
  response->set(http::field::etag, asset->etag);
  // Revalidated on every load (the names carry no version), answered 304 while unchanged.
  response->set(http::field::cache_control, "no-cache");
  if (request[http::field::if_none_match] == asset->etag) {
    response->result(http::status::not_modified);
    return;
  }
  response->result(http::status::ok);
  response->set(http::field::content_type, asset->content_type);
  response->body() = asset->body;
}

void AdminConsole::Login(const Request& request, const auth::AdminGuard& guard,
                         AdminResponse* response) {
  if (!guard.enabled()) {  // an open admin API: nothing to log in to
    RedirectConsole(http::status::see_other, kConsoleRoot, response);
    return;
  }
  const std::optional<std::string> key = ConsoleFormField(request.body(), "key");
  std::optional<std::string> principal = key ? guard.PrincipalOfKey(*key) : std::nullopt;
  if (!principal) {
    RedirectConsole(http::status::see_other, "/ui/?login=failed", response);
    return;
  }
  const std::optional<std::string> id =
      sessions_.Create(std::move(*principal), auth::ConsoleSessions::Clock::now());
  if (!id) {
    SetProblem(Refusal::kStoreError, "no random bytes for a session id", kConsoleLoginPath,
               response);
    return;
  }
  RedirectConsole(http::status::see_other, kConsoleRoot, response);
  std::string cookie = std::string(kConsoleCookie) + "=" + *id +
                       "; HttpOnly; SameSite=Strict; Path=/; Max-Age=" +
                       std::to_string(sessions_.lifetime().count());
  if (secure_) cookie += "; Secure";
  response->set(http::field::set_cookie, cookie);
}

const auth::ConsoleSessions::Session* AdminConsole::SessionOf(const Request& request) {
  const auto cookie = request.find(http::field::cookie);
  if (cookie == request.end()) return nullptr;
  return sessions_.Find(auth::CookieValue(cookie->value(), kConsoleCookie),
                        auth::ConsoleSessions::Clock::now());
}

bool AdminConsole::AnswerLoggedOut(std::string_view path, const auth::AdminGuard::Result& caller,
                                   AdminResponse* response) {
  if (path != kConsoleSessionPath || caller.reason != "missing_credentials") return false;
  SetJson({{"principal", nullptr}, {"csrf_token", ""}, {"auth", "none"}}, response);
  response->set(http::field::cache_control, "no-store");
  return true;
}

bool AdminConsole::HandleAuthenticated(const Request& request, std::string_view path,
                                       const auth::AdminGuard::Result& caller,
                                       const auth::ConsoleSessions::Session* session,
                                       AdminResponse* response) {
  using Via = auth::AdminGuard::Via;
  if (caller.via == Via::kCookie && !IsConsoleReadMethod(request.method())) {
    const std::string_view sent = request["X-CSRF-Token"];
    const std::string& expected = session->csrf_token;
    if (sent.size() != expected.size() ||
        CRYPTO_memcmp(sent.data(), expected.data(), expected.size()) != 0) {
      SetProblem(Refusal::kForbidden,
                 "a console request that changes state needs the session's X-CSRF-Token", path,
                 response);
      return true;
    }
  }
  if (path == kConsoleSessionPath) {
    if (!IsConsoleReadMethod(request.method())) {
      ConsoleMethodNotAllowed("GET, HEAD", path, response);
      return true;
    }
    static constexpr std::string_view kViaNames[] = {"open", "bearer", "certificate", "cookie"};
    json::value principal = nullptr;
    if (!caller.principal.empty()) principal = caller.principal;
    SetJson({{"principal", principal},
             {"csrf_token", caller.via == Via::kCookie ? session->csrf_token : std::string()},
             {"auth", kViaNames[static_cast<int>(caller.via)]}},
            response);
    response->set(http::field::cache_control, "no-store");
    return true;
  }
  if (path == kConsoleLogoutPath) {
    if (request.method() != http::verb::post) {
      ConsoleMethodNotAllowed("POST", path, response);
      return true;
    }
    const auto cookie = request.find(http::field::cookie);
    if (cookie != request.end()) {
      sessions_.Remove(auth::CookieValue(cookie->value(), kConsoleCookie));
    }
    response->result(http::status::no_content);
    response->set(http::field::set_cookie, std::string(kConsoleCookie) +
                                               "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0" +
                                               (secure_ ? "; Secure" : ""));
    return true;
  }
  return false;
}

}  // namespace fencegate::gateway
