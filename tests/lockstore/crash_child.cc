// Advances fence keys as fast as the store acknowledges them and reports every acknowledged
// (key, token) on a pipe, until it is killed. Usage: lockstore_crash_child <db-path> <fd>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "lockstore/rocksdb/rocksdb_fence_store.h"

namespace {

constexpr int kKeys = 8;
constexpr int kMaxInFlight = 32;               // enough concurrent advances to group-commit
constexpr std::uint64_t kMaxTokens = 1000000;  // a bound in case nobody kills us

}  // namespace

int main(int argc, char** argv) {
  using namespace fencegate::lockstore;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <db-path> <fd>\n", argv[0]);
    return 2;
  }
  const int fd = std::atoi(argv[2]);
  std::unique_ptr<FenceStore> store;
  RocksDbFenceStoreOptions options;
  options.path = argv[1];
  if (Status status = OpenRocksDbFenceStore(options, &store); !status.ok()) {
    std::fprintf(stderr, "open: %s\n", status.ToString().c_str());
    return 1;
  }

  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  for (std::uint64_t token = 1; token <= kMaxTokens; ++token) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight < kMaxInFlight; });
      ++in_flight;
    }
    const std::uint64_t key = token % kKeys;
    store->Advance("key" + std::to_string(key), token, 0,
                   [&, key, token](Status status, FenceRecord) {
                     if (status.ok()) {
                       // 16 bytes: one atomic pipe write, so the parent never sees half a pair.
                       const std::uint64_t ack[2] = {key, token};
                       if (write(fd, ack, sizeof(ack)) != sizeof(ack)) std::_Exit(3);
                     }
                     std::lock_guard lock(mu);
                     --in_flight;
                     cv.notify_one();
                   });
  }
  store.reset();
  return 0;
}
