// Shard ownership (lockstore/etcd/shard_ownership) against a real etcd (Debian etcd-server 3.4)
// on loopback: lease renewal on its own thread, and rebalancing when a replica joins or leaves.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "lockstore/etcd/shard_ownership.h"
#include "tests/etcd/etcd_cluster.h"
#include "tests/support/eventually.h"

namespace fencegate::lockstore::etcd {
namespace {

using Clock = std::chrono::steady_clock;
using etcdtest::EtcdCluster;

constexpr std::size_t kShards = 8;
constexpr auto kQuarantine = std::chrono::milliseconds(500);

class ShardOwnershipTest : public etcdtest::OneMemberEtcdTest {
 protected:
  static ShardOwnershipOptions Options(const std::string& prefix, const std::string& name) {
    ShardOwnershipOptions options;
    options.client.endpoints = cluster_->endpoints();
    options.client.request_timeout = std::chrono::milliseconds(500);
    options.client.operation_timeout = std::chrono::milliseconds(2000);
    options.prefix = prefix;
    options.name = name;
    options.peers = {{"a", "127.0.0.1:1"}, {"b", "127.0.0.1:2"}};
    options.shards = kShards;
    options.lease_ttl = std::chrono::seconds(1);
    options.quarantine = kQuarantine;
    return options;
  }
};

bool AdmitsAll(const ShardOwnership& ownership) {
  for (std::size_t shard = 0; shard < kShards; ++shard) {
    if (!ownership.Admits(shard)) return false;
  }
  return true;
}

// The reconciling thread blocks in on_gained (as it would on an etcd read or claim that takes
// up to operation_timeout): renewals go on meanwhile, so the lease stays valid for several TTLs
// past the stall and the replica never self-fences.
TEST_F(ShardOwnershipTest, RenewalsKeepTheLeaseWhileReconcilingIsStalled) {
  std::mutex mu;
  std::condition_variable cv;
  bool stalled = false;
  bool release = false;
  ShardOwnershipOptions options = Options("/stall/", "a");
  options.on_gained = [&](std::size_t) {
    std::unique_lock lock(mu);
    stalled = true;
    cv.wait(lock, [&] { return release; });
  };
  std::unique_ptr<ShardOwnership> ownership;
  ASSERT_TRUE(ShardOwnership::Start(options, &ownership).ok());
  const auto unstall = [&] {
    {
      std::lock_guard lock(mu);
      release = true;
    }
    cv.notify_all();
  };
  ASSERT_TRUE(integration::Eventually([&] {
    std::lock_guard lock(mu);
    return stalled;
  })) << "no shard reached the end of its quarantine";
  const Clock::time_point stall = Clock::now();
  const bool renewed = integration::Eventually(
      [&] { return ownership->LeaseValidUntil() > stall + 3 * options.lease_ttl; });
  const auto stats = ownership->stats();
  unstall();
  EXPECT_TRUE(renewed) << "the lease was not renewed while reconciling was stalled";
  EXPECT_EQ(stats.lease_losses, 0u);
  EXPECT_TRUE(integration::Eventually([&] { return AdmitsAll(*ownership); }));
  EXPECT_EQ(ownership->stats().lease_losses, 0u);
}

// A renewal every third of the TTL, not more often: an upper bound on renewals over a measured
// time, which a slow machine can only lower. (A TTL of 2 s divided as whole seconds gave 0 and
// renewed without pause, a core's tenth per idle replica.)
TEST_F(ShardOwnershipTest, RenewsEveryThirdOfTheTtl) {
  ShardOwnershipOptions options = Options("/renewals/", "a");
  options.lease_ttl = std::chrono::seconds(2);
  const Clock::time_point start = Clock::now();
  std::unique_ptr<ShardOwnership> ownership;
  ASSERT_TRUE(ShardOwnership::Start(options, &ownership).ok());
  ASSERT_TRUE(integration::Eventually([&] { return ownership->stats().renewals >= 3; }));
  const auto renewals = ownership->stats().renewals;
  const auto elapsed = Clock::now() - start;
  const auto period = std::chrono::milliseconds(2000) / 3;
  EXPECT_LE(renewals, static_cast<std::uint64_t>(elapsed / period) + 1)
      << "renewed " << renewals << " times in "
      << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms";
}

// What the replicas of one test saw: checked from on_gained, the instant before the new owner
// admits writes to the shard, and from their logs.
class Observer {
 public:
  void Add(const std::string& name, const ShardOwnership* ownership) {
    std::lock_guard lock(replicas_mu_);
    replicas_[name] = ownership;
  }
  void Remove(const std::string& name) {
    std::lock_guard lock(replicas_mu_);
    replicas_.erase(name);
  }

  ShardOwnershipOptions Watch(ShardOwnershipOptions options) {
    const std::string name = options.name;
    options.on_gained = [this, name](std::size_t shard) {
      {
        // Not under mu_: a replica logs (and so takes mu_) while it holds its own mutex.
        std::lock_guard lock(replicas_mu_);
        for (const auto& [other, ownership] : replicas_) {
          if (other != name && ownership->Admits(shard)) {
            ADD_FAILURE() << name << " gains shard " << shard << " while " << other
                          << " still admits it";
          }
        }
      }
      std::lock_guard lock(mu_);
      gained_[{name, shard}] = Clock::now();
    };
    options.log = [this, name](LogSeverity, std::string_view line) {
      std::lock_guard lock(mu_);
      const std::string text(line);
      const std::string claimed = "claimed shard ";
      const std::string hands = "hands shard ";
      if (const auto at = text.find(claimed); at != std::string::npos) {
        claimed_[{name, std::stoul(text.substr(at + claimed.size()))}] = Clock::now();
      } else if (const auto at = text.find(hands); at != std::string::npos) {
        handed_[{name, std::stoul(text.substr(at + hands.size()))}] = Clock::now();
      }
    };
    return options;
  }

  using Events = std::map<std::pair<std::string, std::size_t>, Clock::time_point>;
  Events gained() const {
    std::lock_guard lock(mu_);
    return gained_;
  }
  Events claimed() const {
    std::lock_guard lock(mu_);
    return claimed_;
  }
  Events handed() const {
    std::lock_guard lock(mu_);
    return handed_;
  }

 private:
  std::mutex replicas_mu_;
  std::map<std::string, const ShardOwnership*> replicas_;
  mutable std::mutex mu_;
  Events gained_, claimed_, handed_;
};

// A replica joins one that owns every shard: once it has been live for a lease TTL, the owner
// hands over the shards rendezvous hashing gives the newcomer, each of which the newcomer
// claims and quarantines before admitting; never do both admit one shard. When it leaves, its
// shards come back.
TEST_F(ShardOwnershipTest, JoiningReplicaGetsItsShareThroughQuarantine) {
  Observer observer;
  std::unique_ptr<ShardOwnership> a, b;
  ASSERT_TRUE(ShardOwnership::Start(observer.Watch(Options("/join/", "a")), &a).ok());
  observer.Add("a", a.get());
  ASSERT_TRUE(integration::Eventually([&] { return AdmitsAll(*a); }));

  std::set<std::size_t> share;
  for (std::size_t shard = 0; shard < kShards; ++shard) {
    if (RendezvousOwner(shard, {"a", "b"}) == "b") share.insert(shard);
  }
  ASSERT_FALSE(share.empty()) << "the names give b no shard: the test would prove nothing";

  const Clock::time_point joined = Clock::now();
  ASSERT_TRUE(ShardOwnership::Start(observer.Watch(Options("/join/", "b")), &b).ok());
  observer.Add("b", b.get());
  const auto balanced = [&] {
    for (std::size_t shard = 0; shard < kShards; ++shard) {
      if (!(share.contains(shard) ? *b : *a).Admits(shard)) return false;
    }
    return true;
  };
  ASSERT_TRUE(integration::Eventually(balanced));

  EXPECT_EQ(a->stats().handed_over, share.size());
  EXPECT_EQ(b->stats().gained, share.size());
  const auto gained = observer.gained();
  const auto claimed = observer.claimed();
  const auto handed = observer.handed();
  for (std::size_t shard : share) {
    ASSERT_TRUE(handed.contains({"a", shard})) << shard;
    ASSERT_TRUE(claimed.contains({"b", shard})) << shard;
    ASSERT_TRUE(gained.contains({"b", shard})) << shard;
    // Lower bounds only: slowness cannot break them.
    EXPECT_GE(handed.at({"a", shard}) - joined, std::chrono::seconds(1)) << shard;
    EXPECT_GE(claimed.at({"b", shard}), handed.at({"a", shard})) << shard;
    EXPECT_GE(gained.at({"b", shard}) - claimed.at({"b", shard}), kQuarantine) << shard;
  }

  observer.Remove("b");
  b.reset();  // revokes b's lease
  EXPECT_TRUE(integration::Eventually([&] { return AdmitsAll(*a); }));
  EXPECT_EQ(a->stats().lease_losses, 0u);
}

}  // namespace
}  // namespace fencegate::lockstore::etcd
