#include "gateway/tls/plain_http_refusal.h"

#include <ostream>  // boost/beast/http/status.hpp uses std::ostream without including it

#include <boost/beast/http/status.hpp>

#include "gateway/http/refusal.h"

namespace fencegate::gateway::tls {

std::string PlainHttpOnTlsResponse() {
  const ProblemDetails problem = RefusalProblem(Refusal::kPlainHttpOnTlsPort);
  std::string body;
  RenderProblemJson(problem, &body);
  namespace http = boost::beast::http;
  std::string response = "HTTP/1.1 " + std::to_string(problem.status) + " ";
  response += http::obsolete_reason(http::int_to_status(problem.status));
  response += "\r\nContent-Type: ";
  response += kProblemContentType;
  response += "\r\nConnection: close\r\nContent-Length: ";
  response += std::to_string(body.size());
  response += "\r\n\r\n";
  response += body;
  return response;
}

}  // namespace fencegate::gateway::tls
