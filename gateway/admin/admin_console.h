#pragma once

#include <chrono>
#include <cstddef>
#include <string_view>

#include "gateway/admin/admin_json.h"
#include "gateway/auth/admin_guard.h"
#include "gateway/auth/console_sessions.h"

namespace fencegate::gateway {

// The browser console on the admin listener (docs/CONSOLE.md):
//   GET /, GET /ui        302 to /ui/
//   GET /ui/...           the console's files, built into the binary (gateway/console/)
//   POST /ui/login        form key=<admin key>: a session cookie, then 303 to /ui/
//   POST /ui/logout       ends the cookie's session (204)
//   GET /ui/session       who the console is logged in as, and the CSRF token of its POSTs
// Runs on the admin thread only, like AdminApi, which owns it.
class AdminConsole {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;

  // Paths answered before the admin guard: the redirect, the files and the login form (a page
  // that needs a login has to load without one).
  static bool IsPublicPath(std::string_view path);

  // `secure`: the admin listener speaks TLS, so the cookie gets the Secure attribute.
  void SetSecureCookies(bool secure) { secure_ = secure; }

  void HandlePublic(const Request& request, std::string_view path, const auth::AdminGuard& guard,
                    AdminResponse* response);

  // The live console session the request's cookie names, or null.
  const auth::ConsoleSessions::Session* SessionOf(const Request& request);

  // After the guard refused `caller`: GET /ui/session without any credential answers 200 with
  // "auth":"none" (the page then shows its login form; a 401 there would only be noise in the
  // browser's console). True when `response` is the answer.
  bool AnswerLoggedOut(std::string_view path, const auth::AdminGuard::Result& caller,
                       AdminResponse* response);

  // After the guard let `caller` in: refuses a cookie-authenticated POST without the session's
  // X-CSRF-Token (403), and answers /ui/session and /ui/logout. True when `response` is the
  // answer; false when the request goes on to the admin API.
  bool HandleAuthenticated(const Request& request, std::string_view path,
                           const auth::AdminGuard::Result& caller,
                           const auth::ConsoleSessions::Session* session, AdminResponse* response);

 private:
  void Login(const Request& request, const auth::AdminGuard& guard, AdminResponse* response);

  auth::ConsoleSessions sessions_{kConsoleSessionLifetime, kMaxConsoleSessions};
  bool secure_ = false;

  // An operator's working day; the cookie's Max-Age says the same.
  static constexpr std::chrono::seconds kConsoleSessionLifetime{8 * 3600};
  // Logins beyond this push out the session closest to expiry, so a script that logs in in a
  // loop cannot grow the table.
  static constexpr std::size_t kMaxConsoleSessions = 256;
};

// The headers every console response carries: a Content-Security-Policy that allows only the
// console's own files (no inline script or style, no framing), nosniff and no referrer.
void SetConsoleSecurityHeaders(AdminResponse* response);

}  // namespace fencegate::gateway
