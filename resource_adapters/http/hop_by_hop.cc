#include "resource_adapters/http/hop_by_hop.h"

#include <string_view>

#include <boost/beast/core/string.hpp>
#include <boost/container/small_vector.hpp>

#include "base/net/field_lists.h"

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
  // The names the Connection fields list, as views of their values (the text of a field stays
  // where it is while fields are erased), so that one pass erases the Connection fields and
  // the fields they name.
  boost::container::small_vector<std::string_view, 8> named;
  bool any = false;
  for (const auto& field : fields) {
    if (field.name() == http::field::connection) {
      any = true;
      ForEachListItem(field.value(), [&named](std::string_view item) { named.push_back(item); });
    }
    any = any || IsHopByHop(field.name());
  }
  if (!any) return;
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
