#include "resource_adapters/http/hop_by_hop.h"

#include <string_view>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/container/small_vector.hpp>

namespace fencegate::adapters {

namespace http = boost::beast::http;

namespace {

bool IsHopByHop(http::field name) {
  switch (name) {
    case http::field::keep_alive:
    case http::field::proxy_connection:
    case http::field::te:
    case http::field::trailer:
    case http::field::transfer_encoding:
    case http::field::upgrade:
      return true;
    default:
      return false;
  }
}

}  // namespace

void StripHopByHopFields(Fields& fields) {
  // The names the Connection fields list, as views into those fields' values: valid while the
  // Connection fields stay, so they are erased last. Walk every field rather than equal_range:
  // Beast's equal_range spans list order, so with two Connection fields it would also cover the
  // fields between them.
  boost::container::small_vector<std::string_view, 8> named;
  bool connection = false;
  for (const auto& field : fields) {
    if (field.name() != http::field::connection) continue;
    connection = true;
    for (auto token : http::token_list(field.value())) {
      named.emplace_back(token);
    }
  }
  // One walk that erases in place, instead of a by-name lookup in the field set per name.
  for (auto it = fields.begin(); it != fields.end();) {
    bool strip = IsHopByHop(it->name());
    if (!strip && it->name() != http::field::connection) {
      for (const std::string_view name : named) {
        if (boost::beast::iequals(it->name_string(), name)) {
          strip = true;
          break;
        }
      }
    }
    it = strip ? fields.erase(it) : std::next(it);
  }
  if (connection) fields.erase(http::field::connection);
}

}  // namespace fencegate::adapters
