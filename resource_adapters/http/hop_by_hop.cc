#include "resource_adapters/http/hop_by_hop.h"

#include <string>
#include <vector>

#include <boost/beast/http/rfc7230.hpp>

namespace fencegate::adapters {

namespace http = boost::beast::http;

void StripHopByHopFields(http::fields& fields) {
  // Copy the names first: erasing invalidates the Connection value the token list points into.
  // Walk every field rather than equal_range: Beast's equal_range spans list order, so with two
  // Connection fields it would also cover the fields between them.
  std::vector<std::string> named;
  for (const auto& field : fields) {
    if (field.name() != http::field::connection) continue;
    for (auto token : http::token_list(field.value())) {
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
