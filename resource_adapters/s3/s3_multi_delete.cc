// A fenced DeleteObjects (POST /bucket?delete). Each listed key is a fenced resource of its own:
// the gateway's fence admits the token on every key's fence key first (all or none), then the
// backend's stored tokens are read, and one key stored with a higher token refuses the whole
// request (409) before anything is deleted. Only then is each key deleted the way a fenced
// DELETE is: a tombstone carrying the token, written under a condition on the version just
// read. A writer that slips in between the HEAD and a key's tombstone makes that key's
// condition fail; the key is read again and either retried or, when it now carries a higher
// token, reported as an <Error> in the DeleteResult while the other keys go ahead: all or
// nothing holds against what was stored when the request arrived, not against writers racing
// it (docs/BACKENDS.md, "DeleteObjects").
#include <algorithm>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "resource_adapters/s3/s3_exchange.h"

namespace fencegate::adapters::s3 {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr std::size_t kTombstoneErrorBodyLimit = 64 * 1024;

std::string TombstoneBody(std::uint64_t token) {
  return "fencegate tombstone, fencing token " + std::to_string(token) + "\n";
}

}  // namespace

asio::awaitable<ResourceFence::Verdict> S3Exchange::AdmitResources(std::vector<std::string> paths) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(ResourceFence::Verdict)>(
      [this](auto handler, std::vector<std::string> paths) {
        // The fence keeps a copyable std::function; the coroutine's handler is move-only.
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        resource_fence_->AdmitAll(std::move(paths), [shared](ResourceFence::Verdict verdict) {
          std::move (*shared)(std::move(verdict));
        });
      },
      asio::use_awaitable, std::move(paths));
}

asio::awaitable<void> S3Exchange::MultiDelete() {
  if (streamed_length_) {
    Finish(Problem{413, "s3-multi-delete-too-large", "Request too large",
                   "a DeleteObjects body larger than the s3 backend's max_spool_bytes cannot be "
                   "read whole; send fewer keys per request"});
    co_return;
  }
  MultiDeleteRequest parsed;
  if (auto error = ParseMultiDelete(body_, &parsed)) {
    Finish(Problem{400, "s3-malformed-delete", "Malformed DeleteObjects request", *error});
    co_return;
  }
  if (resource_fence_ == nullptr) {
    // The gateway forwards a fenced DeleteObjects with its fence (NamesResourcesInBody).
    Finish(Problem{500, "internal-error", "Internal error",
                   "a fenced DeleteObjects reached the s3 adapter without the gateway's fence"});
    co_return;
  }
  std::vector<std::string> paths;
  paths.reserve(parsed.keys.size());
  for (const std::string& key : parsed.keys) paths.push_back("/" + request_.bucket + "/" + key);
  const ResourceFence::Verdict verdict = co_await AdmitResources(std::move(paths));
  if (!verdict.admitted) {
    Finish(verdict.problem.value_or(Problem{}));
    co_return;
  }

  // What every key holds now; any key with a higher token refuses the whole request.
  std::vector<ObjectVersion> seen;
  seen.reserve(parsed.keys.size());
  std::string stale_keys;
  std::uint64_t highest_stored = 0;
  for (const std::string& key : parsed.keys) {
    std::optional<ObjectVersion> version =
        co_await HeadAt(ObjectTarget(request_.bucket, key), request_.bucket + "/" + key, true);
    if (!version) co_return;
    if (version->token > *token_) {
      if (!stale_keys.empty()) stale_keys += ", ";
      stale_keys += "'" + key + "'";
      if (verdict.disclose_highest_token) stale_keys += " (" + std::to_string(version->token) + ")";
      highest_stored = std::max(highest_stored, version->token);
    }
    seen.push_back(std::move(*version));
  }
  if (!stale_keys.empty()) {
    outcome_.backend_stale_token = highest_stored;
    Finish(Problem{409, std::string(kStaleAtBackendProblemType), "Stale fencing token",
                   "nothing was deleted: the backend stores a higher fencing token than the "
                   "presented " +
                       std::to_string(*token_) + " for " + stale_keys});
    co_return;
  }

  std::vector<KeyDeleteOutcome> outcomes;
  outcomes.reserve(parsed.keys.size());
  for (std::size_t i = 0; i < parsed.keys.size(); ++i) {
    outcomes.push_back(co_await DeleteKey(parsed.keys[i], std::move(seen[i])));
  }
  const std::string xml = DeleteResultXml(outcomes, parsed.quiet);
  co_await WriteSimpleResponse(200, "application/xml", xml);
}

asio::awaitable<KeyDeleteOutcome> S3Exchange::DeleteKey(const std::string& key,
                                                        ObjectVersion seen) {
  KeyDeleteOutcome outcome{.key = key};
  const std::string target = ObjectTarget(request_.bucket, key);
  const std::string cache_key = request_.bucket + "/" + key;
  const std::string body = TombstoneBody(*token_);
  for (unsigned attempt = 0; attempt <= backend_->options.max_retries; ++attempt) {
    if (seen.token > *token_) {
      outcome.code = "PreconditionFailed";
      outcome.message = "a writer with a higher fencing token wrote the object during the delete";
      co_return outcome;
    }
    RequestHeader header;
    header.method(http::verb::put);
    header.target(target);
    header.set(http::field::content_length, std::to_string(body.size()));
    header.set(kTombstoneMeta, "1");
    header.set(kTokenMeta, std::to_string(*token_));
    if (seen.exists) {
      header.set(http::field::if_match, IfMatchValue(seen.etag));
    } else {
      header.set(http::field::if_none_match, "*");
    }
    std::optional<UpstreamCall> attempt_call;
    UpstreamCall& call = attempt_call.emplace(ioc_, backend_->endpoint, pools_, fence_key_);
    outcome_.backend_reached = true;
    const error_code ec = co_await Timed(call.Send(std::move(header), body));
    if (ec) {
      cache_->Erase(cache_key);
      outcome.code = "ServiceUnavailable";
      outcome.message = "the backend could not be reached: " + ec.message();
      co_return outcome;
    }
    const unsigned status = call.response().result_int();
    std::string ignored;
    co_await call.ReadWholeBody(&ignored, kTombstoneErrorBodyLimit);
    if (status / 100 == 2) {
      ObjectVersion stored = VersionFromFields(call.response());
      stored.token = *token_;
      stored.tombstone = true;
      cache_->Put(cache_key, std::move(stored));
      outcome.deleted = true;
      co_return outcome;
    }
    if (!IsWriteConflict(status)) {
      cache_->Erase(cache_key);
      outcome.code = "InternalError";
      outcome.message = "the backend answered the tombstone's PUT with " + std::to_string(status);
      co_return outcome;
    }
    // Someone wrote in between: look again.
    attempt_call.reset();
    std::optional<ObjectVersion> again = co_await HeadAt(target, cache_key, false);
    if (!again) {
      outcome.code = "ServiceUnavailable";
      outcome.message = "the backend failed the HEAD after a write conflict";
      co_return outcome;
    }
    seen = std::move(*again);
  }
  outcome.code = "SlowDown";
  outcome.message = "the object kept changing under concurrent writers; " +
                    std::to_string(backend_->options.max_retries) +
                    " conditional retries were not enough";
  co_return outcome;
}

}  // namespace fencegate::adapters::s3
