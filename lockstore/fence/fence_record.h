#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// The durable state of one fence key.
struct FenceRecord {
  // The highest token ever admitted for the key; never decreases.
  Token highest = 0;
  // Wall-clock time (Unix milliseconds) of the last advance. Informational only: no admission
  // decision reads a clock.
  std::int64_t advanced_at_ms = 0;
};

// One refused write, kept for the operators' audit trail (/admin/rejections).
struct RejectionRecord {
  std::uint64_t sequence = 0;  // assigned by the store, increasing
  std::int64_t at_ms = 0;      // Unix milliseconds
  std::string route;
  std::string fence_key;  // empty when the write was refused before a key was derived
  std::string method;
  std::string path;
  std::string request_id;
  std::string trace_id;  // W3C trace id of the request (32 hex digits); empty when it had none
  std::string reason;    // stale_token, missing_token, invalid_token, store_error, ...
  Token presented = 0;   // meaningful when has_presented
  bool has_presented = false;
  Token highest = 0;       // the fence's highest token at the time of refusal
  std::string client;      // the client's IP address, without port
  std::string principal;   // the authenticated principal; empty when the route has none
  std::string user_agent;  // the request's User-Agent (capped); empty when it sent none
};

// One stored fence, as listed for operators (FenceStore::ListFences).
struct FenceListing {
  std::string fence_key;
  FenceRecord record;
};

// One page of a fence listing: `more` when keys may follow the last one listed.
struct FencePage {
  std::vector<FenceListing> fences;
  bool more = false;
};

}  // namespace fencegate::lockstore
