#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fencegate::adapters::s3 {

// S3's limit on the objects of one DeleteObjects request.
inline constexpr std::size_t kMaxMultiDeleteKeys = 1000;

// A DeleteObjects body (POST /bucket?delete), as far as a fenced delete needs it.
struct MultiDeleteRequest {
  bool quiet = false;             // <Quiet>true</Quiet>: only errors are listed in the answer
  std::vector<std::string> keys;  // in the order listed, each once
};

// Parses a DeleteObjects body. An error message when it is not XML, its root is not Delete,
// an Object has no Key (or an empty one), it lists no object or more than kMaxMultiDeleteKeys,
// or an Object names a VersionId: a fenced delete leaves a tombstone as the key's current
// version (docs/BACKENDS.md), and removing one version is not a write the token can guard.
std::optional<std::string> ParseMultiDelete(std::string_view body, MultiDeleteRequest* out);

// How the delete of one key ended, as S3's DeleteResult reports it.
struct KeyDeleteOutcome {
  std::string key;
  bool deleted = false;
  std::string code{};     // when not deleted: S3's error code ("PreconditionFailed", ...)
  std::string message{};  // when not deleted
};

// The DeleteResult document; with `quiet`, deleted keys are left out.
std::string DeleteResultXml(const std::vector<KeyDeleteOutcome>& outcomes, bool quiet);

}  // namespace fencegate::adapters::s3
