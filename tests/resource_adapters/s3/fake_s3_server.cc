#include "tests/resource_adapters/s3/fake_s3_server.h"

#include <algorithm>
#include <cstdio>

namespace fencegate::adapters::testing {

namespace {

namespace http = boost::beast::http;
using Reply = FixtureHttpServer::Reply;

Reply FakeS3Status(unsigned status, std::string code = {}) {
  Reply reply;
  reply.response.result(status);
  reply.response.version(11);
  if (!code.empty()) reply.response.body() = "<Error><Code>" + code + "</Code></Error>";
  reply.response.prepare_payload();
  return reply;
}

}  // namespace

FakeS3Server::FakeS3Server(Behaviour behaviour)
    : behaviour_(behaviour),
      server_([this](const FixtureHttpServer::Received& received) { return Answer(received); }) {}

void FakeS3Server::CreateBucket(const std::string& bucket) {
  const std::lock_guard lock(mutex_);
  buckets_.push_back(bucket);
}

std::map<std::string, FakeS3Server::Object> FakeS3Server::Objects() const {
  const std::lock_guard lock(mutex_);
  return objects_;
}

bool FakeS3Server::Matches(std::string value, const std::string& etag) const {
  const bool quoted = value.size() >= 2 && value.front() == '"' && value.back() == '"';
  if (quoted) {
    if (behaviour_.bare_etags_only) return false;
    value = value.substr(1, value.size() - 2);
  }
  return value == etag;
}

Reply FakeS3Server::Answer(const FixtureHttpServer::Received& received) {
  if (down_) {
    Reply closed;
    closed.action = FixtureHttpServer::Action::kCloseWithoutAnswer;
    return closed;
  }
  const auto& request = received.request;
  std::string path(request.target().substr(0, request.target().find('?')));
  const std::size_t slash = path.find('/', 1);
  const std::string bucket = path.substr(1, slash == std::string::npos ? slash : slash - 1);
  const std::string name = path.substr(1);

  const std::lock_guard lock(mutex_);
  if (std::find(buckets_.begin(), buckets_.end(), bucket) == buckets_.end()) {
    return FakeS3Status(404, "NoSuchBucket");
  }
  const auto stored = objects_.find(name);
  const bool exists = stored != objects_.end();
  const auto if_match = request.find(http::field::if_match);
  const bool has_if_match = if_match != request.end();
  const bool if_match_fails =
      has_if_match && (!exists || !Matches(std::string(if_match->value()), stored->second.etag));

  switch (request.method()) {
    case http::verb::get:
    case http::verb::head: {
      if (!exists) return FakeS3Status(404, "NoSuchKey");
      // A HEAD answer carries no body (the fixture would write one).
      Reply reply = FixtureHttpServer::Ok(
          request.method() == http::verb::head ? std::string() : stored->second.body);
      reply.response.set(http::field::etag, "\"" + stored->second.etag + "\"");
      if (!stored->second.token.empty()) {
        reply.response.set("x-amz-meta-fencing-token", stored->second.token);
      }
      return reply;
    }
    case http::verb::put: {
      if (request.body() == "fencegate probe 1\n") ++probe_runs_;
      const auto copy_source = request.find("x-amz-copy-source");
      const bool is_copy = copy_source != request.end();
      const bool conditions =
          is_copy ? behaviour_.copy_destination_conditions : behaviour_.put_conditions;
      if (conditions &&
          (if_match_fails || (request.count(http::field::if_none_match) != 0 && exists))) {
        return FakeS3Status(412, "PreconditionFailed");
      }
      Object object;
      if (is_copy) {
        const auto source = objects_.find(std::string(copy_source->value()).substr(1));
        if (source == objects_.end()) return FakeS3Status(404, "NoSuchKey");
        object.body = source->second.body;
      } else {
        object.body = request.body();
      }
      const auto token = request.find("x-amz-meta-fencing-token");
      if (token != request.end()) object.token = std::string(token->value());
      char etag[33];
      std::snprintf(etag, sizeof etag, "%032llx", static_cast<unsigned long long>(next_etag_++));
      object.etag = etag;
      objects_[name] = object;
      Reply reply = FixtureHttpServer::Ok("");
      reply.response.set(http::field::etag, "\"" + object.etag + "\"");
      return reply;
    }
    case http::verb::delete_:
      if (behaviour_.delete_conditions && if_match_fails) {
        return FakeS3Status(412, "PreconditionFailed");
      }
      objects_.erase(name);
      return FakeS3Status(204);
    default:
      return FakeS3Status(501, "NotImplemented");
  }
}

}  // namespace fencegate::adapters::testing
