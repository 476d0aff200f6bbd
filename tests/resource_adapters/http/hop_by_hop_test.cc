// StripHopByHopFields (resource_adapters/http/hop_by_hop.h): what a backend's response loses
// before it is relayed (RFC 9110 7.6.1).
#include "resource_adapters/http/hop_by_hop.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

namespace http = boost::beast::http;

std::vector<std::string> Names(const Fields& fields) {
  std::vector<std::string> names;
  for (const auto& field : fields) names.emplace_back(field.name_string());
  return names;
}

TEST(StripHopByHopFieldsTest, DropsConnectionAndWhatItNamesAcrossSeveralConnectionFields) {
  Fields fields;
  fields.insert(http::field::connection, "keep-alive, X-First");
  fields.insert("X-First", "per-hop");
  fields.insert("X-Between", "end-to-end");
  fields.insert(http::field::server, "backend");
  fields.insert(http::field::connection, "server");  // a second field, naming a known field
  fields.insert(http::field::keep_alive, "timeout=5");
  fields.insert(http::field::transfer_encoding, "chunked");
  fields.insert(http::field::date, "Thu, 03 Dec 2026 12:00:00 GMT");
  StripHopByHopFields(fields);
  EXPECT_EQ(Names(fields), (std::vector<std::string>{"X-Between", "Date"}));
}

TEST(StripHopByHopFieldsTest, LeavesAHeaderWithoutHopByHopFieldsAsItIs) {
  Fields fields;
  fields.insert(http::field::content_length, "2");
  fields.insert("X-Custom", "a");
  StripHopByHopFields(fields);
  EXPECT_EQ(Names(fields), (std::vector<std::string>{"Content-Length", "X-Custom"}));
}

}  // namespace
}  // namespace fencegate::adapters
