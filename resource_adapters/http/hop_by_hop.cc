#include "resource_adapters/http/hop_by_hop.h"

#include <string_view>

#include <boost/beast/core/string.hpp>
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

// Appends the non-empty items of the comma-separated `list`, without surrounding spaces. A
// Connection value is a list of tokens: no quoted commas to care about.
void AppendListItems(std::string_view list,
                     boost::container::small_vector<std::string_view, 8>& items) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) items.push_back(item);
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
      AppendListItems(field.value(), named);
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
