#include "gateway/tls/plain_http_refusal.h"

#include "gateway/http/problem.h"

namespace fencegate::gateway::tls {

std::string PlainHttpOnTlsResponse() {
  std::string body;
  RenderProblemJson({.status = 400,
                     .slug = "plain-http-on-tls-port",
                     .title = "Plain HTTP sent to a TLS port",
                     .detail = "this listener speaks HTTPS only"},
                    &body);
  std::string response = "HTTP/1.1 400 Bad Request\r\nContent-Type: ";
  response += kProblemContentType;
  response += "\r\nConnection: close\r\nContent-Length: ";
  response += std::to_string(body.size());
  response += "\r\n\r\n";
  response += body;
  return response;
}

}  // namespace fencegate::gateway::tls
