#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/resource_adapters/http/fixture_http_server.h"

namespace fencegate::adapters::testing {

// A path-style S3 server in memory for the s3 adapter's condition tests, with switches for what
// it does with conditional headers: a backend that enforces them, ignores them, or (like
// radosgw 16.2) enforces them on PUT only and matches only bare ETags. Signatures are not
// checked.
class FakeS3Server {
 public:
  struct Behaviour {
    bool put_conditions = true;
    bool delete_conditions = true;
    bool copy_destination_conditions = true;
    bool bare_etags_only = false;  // a quoted If-Match never matches (radosgw 16.2)
  };
  struct Object {
    std::string body;
    std::string etag;   // bare
    std::string token;  // x-amz-meta-fencing-token
  };

  explicit FakeS3Server(Behaviour behaviour);

  std::uint16_t port() const { return server_.port(); }
  // Every request answered by closing the connection (the backend is "down").
  void SetDown(bool down) { down_ = down; }
  void CreateBucket(const std::string& bucket);
  std::map<std::string, Object> Objects() const;  // by "bucket/key"
  // How many probe runs began (the first scratch PUT of each).
  int probe_runs() const { return probe_runs_; }
  std::vector<FixtureHttpServer::Received> received() const { return server_.received(); }

 private:
  FixtureHttpServer::Reply Answer(const FixtureHttpServer::Received& received);
  // Whether an If-Match value names the stored ETag, as this server compares them.
  bool Matches(std::string value, const std::string& etag) const;

  const Behaviour behaviour_;
  std::atomic<bool> down_{false};
  std::atomic<int> probe_runs_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> buckets_;
  std::map<std::string, Object> objects_;
  std::uint64_t next_etag_ = 1;
  FixtureHttpServer server_;  // last: its thread stops before the state above goes
};

}  // namespace fencegate::adapters::testing
