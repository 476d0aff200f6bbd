#include "tests/s3/s3_requests.h"

#include <regex>

#include <gtest/gtest.h>

namespace fencegate::integration {

Response Put(std::uint16_t port, const std::string& target, std::uint64_t token, std::string body,
             std::initializer_list<std::pair<std::string, std::string>> extra) {
  Request request = MakeRequest(http::verb::put, target, extra, std::move(body));
  request.set("Fencing-Token", std::to_string(token));
  std::string error;
  std::optional<Response> response = Fetch(port, std::move(request), &error);
  EXPECT_TRUE(response.has_value()) << error;
  return response.value_or(Response{});
}

Response Send(std::uint16_t port, http::verb method, const std::string& target,
              std::optional<std::uint64_t> token, std::string body) {
  Request request = MakeRequest(method, target, {}, std::move(body));
  if (token) request.set("Fencing-Token", std::to_string(*token));
  std::string error;
  std::optional<Response> response = Fetch(port, std::move(request), &error);
  EXPECT_TRUE(response.has_value()) << error;
  return response.value_or(Response{});
}

std::string Reason(const Response& response) {
  std::smatch match;
  const std::string body = response.body();
  return std::regex_search(body, match, std::regex("\"reason\":\"([a-z_]+)\"")) ? match[1].str()
                                                                                : std::string();
}

void CreateBucket(std::uint16_t port, const std::string& bucket) {
  const Response created = Send(port, http::verb::put, "/" + bucket, 1);
  // 409 BucketAlreadyExists when an earlier test made it.
  ASSERT_TRUE(created.result_int() == 200 || created.result_int() == 409) << created.body();
}

}  // namespace fencegate::integration
