#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "tests/support/http_client.h"

// Requests the s3 tests send through a gateway (tests/s3/).
namespace fencegate::integration {

// A fenced PUT of `body` with `token`, and `extra` fields.
Response Put(std::uint16_t port, const std::string& target, std::uint64_t token, std::string body,
             std::initializer_list<std::pair<std::string, std::string>> extra = {});

// A request with a Fencing-Token when `token` is set.
Response Send(std::uint16_t port, http::verb method, const std::string& target,
              std::optional<std::uint64_t> token, std::string body = {});

// The problem document's "reason" ("" when none).
std::string Reason(const Response& response);

// Creates `bucket` through the gateway (or finds it made by an earlier test).
void CreateBucket(std::uint16_t port, const std::string& bucket);

}  // namespace fencegate::integration
