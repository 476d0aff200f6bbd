#pragma once

namespace fencegate::gateway {

// Request fields whose names contain '_' (README "Header names with underscores"). CGI, WSGI,
// PHP and many application servers turn both '-' and '_' into '_' (HTTP_TRANSFER_ENCODING),
// so behind them `Transfer_Encoding: chunked` is Transfer-Encoding, a framing the gateway
// never saw. What limits.headers_with_underscores does with such fields:
enum class UnderscoreAction {
  kDrop,    // removed before routing, counted (nginx's underscores_in_headers off)
  kReject,  // the request gets 400 underscore-in-header-name
  kAllow,   // forwarded as sent
};

}  // namespace fencegate::gateway
