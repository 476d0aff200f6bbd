#include "resource_adapters/http/hop_by_hop.h"

#include <string>
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
  // The names the Connection fields list, copied out first so that the Connection fields can
  // go in the same walk as the fields they name: erasing Connection by name afterwards was a
  // scan of the fields on every response (nearly all carry "Connection: keep-alive").
  thread_local std::string options;
  options.clear();
  for (const auto& field : fields) {
    if (field.name() != http::field::connection) continue;
    options.append(field.value());
    options.push_back(',');
  }
  boost::container::small_vector<std::string_view, 8> named;
  for (auto token : http::token_list(options)) named.emplace_back(token);
  for (auto it = fields.begin(); it != fields.end();) {
    bool strip = IsHopByHop(it->name()) || it->name() == http::field::connection;
    if (!strip) {
      for (const std::string_view name : named) {
        if (boost::beast::iequals(it->name_string(), name)) {
          strip = true;
          break;
        }
      }
    }
    it = strip ? fields.erase(it) : std::next(it);
  }
}

}  // namespace fencegate::adapters
