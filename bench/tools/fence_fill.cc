// Pre-populates a fencegate fence store with many distinct fence keys, for the benchmark's
// "1,000,000 fence keys" workload. It opens the store through the same RocksDbFenceStore the
// gateway opens and advances keys `<prefix>0` .. `<prefix>N-1` to one token, so the records on
// disk are exactly those the gateway would have written; a gateway started on the same data
// directory afterwards sees every key as already fenced. Driving a million advances through
// HTTP would take minutes; here the store group-commits them in batches of max_batch, and the
// fences are compacted at the end.
//
//   fence_fill --store DIR --keys N [--prefix /k/] [--token 1] [--in-flight 65536]

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "lockstore/fence/fence_store.h"
#include "lockstore/rocksdb/rocksdb_fence_store.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "lockstore/tokens/token.h"

namespace {

struct Arguments {
  std::string store;
  std::uint64_t keys = 0;
  std::string prefix = "/k/";
  fencegate::lockstore::Token token = 1;
  // Advances outstanding at once: enough to fill the store's batches, bounded so that the
  // queued callbacks do not hold the whole key set in memory.
  std::uint64_t in_flight = 65536;
};

bool ParseArguments(int argc, char** argv, Arguments* out) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--store") {
      out->store = value;
    } else if (flag == "--keys") {
      out->keys = std::strtoull(value, nullptr, 10);
    } else if (flag == "--prefix") {
      out->prefix = value;
    } else if (flag == "--token") {
      const auto token = fencegate::lockstore::ParseToken(value);
      if (!token || *token == 0) return false;
      out->token = *token;
    } else if (flag == "--in-flight") {
      out->in_flight = std::strtoull(value, nullptr, 10);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && !out->store.empty() && out->keys > 0 && out->in_flight > 0;
}

// Counts outstanding advances and remembers the first failure; the store calls back from its
// writer thread.
class Tracker {
 public:
  void Started() {
    std::lock_guard lock(mutex_);
    ++outstanding_;
  }

  void Finished(const fencegate::lockstore::Status& status) {
    std::lock_guard lock(mutex_);
    --outstanding_;
    if (!status.ok() && first_error_.ok()) first_error_ = status;
    changed_.notify_all();
  }

  // Waits until at most `limit` advances are outstanding; returns the first failure, if any.
  fencegate::lockstore::Status WaitUntilAtMost(std::uint64_t limit) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return outstanding_ <= limit || !first_error_.ok(); });
    return first_error_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t outstanding_ = 0;
  fencegate::lockstore::Status first_error_;
};

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!ParseArguments(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: fence_fill --store DIR --keys N [--prefix /k/] [--token T>=1] "
                 "[--in-flight N]\n");
    return 2;
  }
  fencegate::lockstore::RocksDbFenceStoreOptions options;
  options.path = args.store;
  std::unique_ptr<fencegate::lockstore::RocksDbFenceStore> store;
  if (auto status = fencegate::lockstore::RocksDbFenceStore::Open(options, &store); !status.ok()) {
    std::fprintf(stderr, "fence_fill: cannot open %s: %s\n", args.store.c_str(),
                 status.ToString().c_str());
    return 1;
  }

  const auto start = std::chrono::steady_clock::now();
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  Tracker tracker;
  std::string key;
  for (std::uint64_t i = 0; i < args.keys; ++i) {
    if (auto status = tracker.WaitUntilAtMost(args.in_flight - 1); !status.ok()) {
      std::fprintf(stderr, "fence_fill: advance failed: %s\n", status.ToString().c_str());
      return 1;
    }
    key = args.prefix;
    key += std::to_string(i);
    tracker.Started();
    store->Advance(key, args.token, now_ms,
                   [&tracker](fencegate::lockstore::Status status,
                              fencegate::lockstore::FenceRecord) { tracker.Finished(status); });
  }
  if (auto status = tracker.WaitUntilAtMost(0); !status.ok()) {
    std::fprintf(stderr, "fence_fill: advance failed: %s\n", status.ToString().c_str());
    return 1;
  }
  // A store that has been running for a while holds its keys in one compacted level, not in
  // the freshly flushed L0 files and WAL a bulk load leaves: measure lookups on that shape.
  if (auto status = store->CompactFences(); !status.ok()) {
    std::fprintf(stderr, "fence_fill: compaction failed: %s\n", status.ToString().c_str());
    return 1;
  }
  store.reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fence_fill: %llu keys at token %llu in %.1f s\n",
              static_cast<unsigned long long>(args.keys),
              static_cast<unsigned long long>(args.token), seconds);
  return 0;
}
