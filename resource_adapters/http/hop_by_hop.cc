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
  // The names the Connection fields list are copied out first, so that one pass erases the
  // Connection fields and the fields they name.
  thread_local std::string options;
  options.clear();
  bool any = false;
  for (const auto& field : fields) {
    const bool connection = field.name() == http::field::connection;
    if (connection) {
      options.append(field.value());
      options.push_back(',');
    }
    any = any || connection || IsHopByHop(field.name());
  }
  if (!any) return;
  boost::container::small_vector<std::string_view, 8> named;
  for (auto token : http::token_list(options)) named.emplace_back(token);
  fields.erase_if([&named](const Fields::value_type& field) {
    if (field.name() == http::field::connection || IsHopByHop(field.name())) return true;
    const std::string_view name = field.name_string();
    for (const std::string_view option : named) {
      if (option.size() == name.size() && boost::beast::iequals(name, option)) return true;
    }
    return false;
  });
}

}  // namespace fencegate::adapters
