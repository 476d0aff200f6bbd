#include "resource_adapters/http/hop_by_hop.h"

#include <string>
#include <vector>

#include <boost/beast/http/rfc7230.hpp>

namespace fencegate::adapters {

namespace http = boost::beast::http;

void StripHopByHopFields(http::fields& fields) {
  // Copy the names first: erasing invalidates the Connection value the token list points into.
  std::vector<std::string> named;
  auto [first, last] = fields.equal_range(http::field::connection);
  for (auto connection = first; connection != last; ++connection) {
    for (auto token : http::token_list(connection->value())) {
      named.emplace_back(token);
    }
  }
  for (const auto& name : named) {
    fields.erase(name);
  }
  for (auto field : {http::field::connection, http::field::keep_alive,
                     http::field::proxy_connection, http::field::te, http::field::trailer,
                     http::field::transfer_encoding, http::field::upgrade}) {
    fields.erase(field);
  }
}

}  // namespace fencegate::adapters
