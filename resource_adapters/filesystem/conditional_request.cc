#include "resource_adapters/filesystem/conditional_request.h"

#include <functional>

namespace fencegate::adapters {

namespace {

namespace http = boost::beast::http;

struct EntityTag {
  bool weak = false;
  std::string_view opaque;  // with its quotes
};

bool IsListSpace(char c) { return c == ' ' || c == '\t' || c == ','; }

// Calls `visit` for each entity tag in a field value ("*" is an entity tag with opaque "*").
// Stops at the first malformed element: the rest of the value cannot be trusted.
void ForEachEntityTag(std::string_view value, const std::function<void(EntityTag)>& visit) {
  std::size_t i = 0;
  while (i < value.size()) {
    if (IsListSpace(value[i])) {
      ++i;
      continue;
    }
    EntityTag tag;
    if (value[i] == '*') {
      tag.opaque = value.substr(i, 1);
      visit(tag);
      ++i;
      continue;
    }
    if (value.substr(i).starts_with("W/")) {
      tag.weak = true;
      i += 2;
    }
    if (i >= value.size() || value[i] != '"') {
      return;
    }
    const std::size_t close = value.find('"', i + 1);
    if (close == std::string_view::npos) {
      return;
    }
    tag.opaque = value.substr(i, close - i + 1);
    visit(tag);
    i = close + 1;
  }
}

EntityTag ParseOne(std::string_view etag) {
  EntityTag tag;
  ForEachEntityTag(etag, [&](EntityTag parsed) { tag = parsed; });
  return tag;
}

bool AnyMatches(std::string_view list, const std::string* current_etag, bool strong) {
  if (current_etag == nullptr) {
    return false;
  }
  const EntityTag current = ParseOne(*current_etag);
  bool matched = false;
  ForEachEntityTag(list, [&](EntityTag tag) {
    if (tag.opaque == "*") {
      matched = true;
    } else if (tag.opaque == current.opaque && !(strong && (tag.weak || current.weak))) {
      matched = true;
    }
  });
  return matched;
}

}  // namespace

ClientConditions ClientConditions::FromHeader(const RequestHeader& header) {
  ClientConditions conditions;
  if (auto field = header.find(http::field::if_match); field != header.end()) {
    conditions.if_match = std::string(field->value());
  }
  if (auto field = header.find(http::field::if_none_match); field != header.end()) {
    conditions.if_none_match = std::string(field->value());
  }
  return conditions;
}

bool IfMatchHolds(std::string_view if_match, const std::string* current_etag) {
  return AnyMatches(if_match, current_etag, /*strong=*/true);
}

bool IfNoneMatchMatches(std::string_view if_none_match, const std::string* current_etag) {
  return AnyMatches(if_none_match, current_etag, /*strong=*/false);
}

ReadDecision DecideRead(const ClientConditions& conditions, const std::string& etag) {
  if (conditions.if_match && !IfMatchHolds(*conditions.if_match, &etag)) {
    return ReadDecision::kPreconditionFailed;
  }
  if (conditions.if_none_match && IfNoneMatchMatches(*conditions.if_none_match, &etag)) {
    return ReadDecision::kNotModified;
  }
  return ReadDecision::kServe;
}

bool WriteConditionsHold(const ClientConditions& conditions, const std::string* current_etag) {
  if (conditions.if_match && !IfMatchHolds(*conditions.if_match, current_etag)) {
    return false;
  }
  if (conditions.if_none_match && IfNoneMatchMatches(*conditions.if_none_match, current_etag)) {
    return false;
  }
  return true;
}

}  // namespace fencegate::adapters
