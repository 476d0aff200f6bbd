// EtcdAsyncClient, and the fence store's transactions on it, against a real etcd (Debian
// etcd-server 3.4) on loopback; a held TcpRelay in front of a member makes requests stay in
// flight (the pool's overlap) or vanish (a black-holed member), as the relay and the client
// report it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <vector>

#include <boost/json.hpp>

#include "lockstore/etcd/etcd_async_client.h"
#include "lockstore/etcd/etcd_fence_store.h"
#include "tests/etcd/etcd_cluster.h"
#include "tests/support/eventually.h"
#include "tests/support/http_client.h"
#include "tests/support/tcp_relay.h"

namespace fencegate::lockstore::etcd {
namespace {

using etcdtest::EtcdCluster;
using integration::Eventually;
using integration::TcpRelay;

EtcdClientOptions Options(std::vector<std::string> endpoints) {
  EtcdClientOptions options;
  options.endpoints = std::move(endpoints);
  options.request_timeout = std::chrono::milliseconds(500);
  options.operation_timeout = std::chrono::milliseconds(3000);
  return options;
}

std::string Local(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

std::pair<Status, std::optional<EtcdKeyValue>> GetSync(EtcdAsyncClient& client,
                                                       const std::string& key) {
  std::promise<std::pair<Status, std::optional<EtcdKeyValue>>> done;
  client.Get(key, [&done](Status status, std::optional<EtcdKeyValue> kv) {
    done.set_value({std::move(status), std::move(kv)});
  });
  return done.get_future().get();
}

std::pair<Status, EtcdTxnResult> PutIfAbsentSync(EtcdAsyncClient& client, const std::string& key,
                                                 const std::string& value, bool idempotent) {
  std::promise<std::pair<Status, EtcdTxnResult>> done;
  client.Txn({{key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, {}, 0}},
             {{EtcdOp::Kind::kPut, key, value, 0}}, {{EtcdOp::Kind::kRange, key, {}, 0}},
             idempotent, [&done](Status status, EtcdTxnResult result) {
               done.set_value({std::move(status), std::move(result)});
             });
  return done.get_future().get();
}

// Callbacks counted, for requests a test leaves in flight.
struct Tally {
  std::atomic<int> ok{0};
  std::atomic<int> unavailable{0};
  std::atomic<int> other{0};
  int total() const { return ok + unavailable + other; }
  EtcdAsyncClient::GetCallback Get() {
    return [this](Status status, std::optional<EtcdKeyValue>) { Count(status); };
  }
  void Count(const Status& status) {
    if (status.ok()) {
      ++ok;
    } else if (status.code() == Status::Code::kUnavailable) {
      ++unavailable;
    } else {
      ++other;
    }
  }
};

class EtcdAsync : public etcdtest::OneMemberEtcdTest {};

TEST_F(EtcdAsync, TxnAndGetWithBinaryKeys) {
  EtcdAsyncClient client(Options(cluster_->endpoints()), std::make_shared<EtcdClientCounters>(), 2);
  const std::string key("/a/basic/k\0\xff", 12);
  auto [status, result] = PutIfAbsentSync(client, key, std::string("v\0x", 3), true);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(result.succeeded);
  EXPECT_GT(result.revision, 0);
  std::tie(status, result) = PutIfAbsentSync(client, key, "other", true);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_FALSE(result.succeeded);  // the failure branch read it
  ASSERT_EQ(result.ranges.size(), 1u);
  EXPECT_EQ(result.ranges[0]->value, std::string("v\0x", 3));
  const auto [get_status, kv] = GetSync(client, key);
  ASSERT_TRUE(get_status.ok());
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->value, std::string("v\0x", 3));
  EXPECT_FALSE(GetSync(client, "/a/basic/absent").second.has_value());
}

// Ten reads through a held relay with a pool of four: four connections open, each with one
// request the relay holds, six reads wait; released, all ten are answered over the same four
// keep-alive connections.
TEST_F(EtcdAsync, SeveralRequestsAreInFlightAtOnceOverThePool) {
  TcpRelay relay(cluster_->client_port(0));
  EtcdAsyncClient client(Options({Local(relay.port())}), std::make_shared<EtcdClientCounters>(), 4);
  relay.Hold();
  Tally tally;
  for (int i = 0; i < 10; ++i) client.Get("/a/pool/" + std::to_string(i), tally.Get());
  ASSERT_TRUE(Eventually([&] {
    return relay.connections_holding() == 4 && client.stats().in_flight == 4 &&
           client.stats().waiting == 6;
  })) << relay.connections_holding()
      << " " << client.stats().in_flight;
  EXPECT_EQ(relay.open_connections(), 4);
  EXPECT_EQ(client.stats().open_connections, 4u);
  relay.Release();
  ASSERT_TRUE(Eventually([&] { return tally.total() == 10; }));
  EXPECT_EQ(tally.ok.load(), 10);
  EXPECT_EQ(client.stats().in_flight_high_water, 4u);
  EXPECT_EQ(relay.open_connections(), 4);  // reused, not reopened
}

// A refused connection never reached a member: even a transaction that is not idempotent goes
// on to the next one.
TEST_F(EtcdAsync, ARefusedMemberIsSkippedEvenForATxnThatIsNotIdempotent) {
  auto counters = std::make_shared<EtcdClientCounters>();
  EtcdAsyncClient client(Options({Local(etcdtest::FreePort()), cluster_->endpoints()[0]}), counters,
                         2);
  const auto [status, result] = PutIfAbsentSync(client, "/a/refused/once", "x", false);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(result.succeeded);
  EXPECT_GE(counters->failovers.load(), 1u);
  EXPECT_EQ(client.stats().preferred_endpoint, cluster_->endpoints()[0]);
}

// A member that accepts connections and never answers: each attempt ends at request_timeout,
// reads go on to the next member, which then stays preferred.
TEST_F(EtcdAsync, ABlackHoledMemberTimesOutAndTheNextAnswers) {
  TcpRelay relay(cluster_->client_port(0));
  relay.Hold();
  auto counters = std::make_shared<EtcdClientCounters>();
  EtcdClientOptions options = Options({Local(relay.port()), cluster_->endpoints()[0]});
  options.request_timeout = std::chrono::milliseconds(200);
  EtcdAsyncClient client(options, counters, 2);
  const auto [status, kv] = GetSync(client, "/a/hole/k");
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_GE(counters->failovers.load(), 1u);
  EXPECT_GE(counters->errors.load(), 1u);
  EXPECT_EQ(client.stats().preferred_endpoint, cluster_->endpoints()[0]);
  EXPECT_TRUE(GetSync(client, "/a/hole/k").first.ok());
  EXPECT_EQ(counters->failovers.load(), 1u);  // stays on the member that answers

  // Only the black hole: the operation fails Unavailable after its operation timeout.
  options.endpoints = {Local(relay.port())};
  options.operation_timeout = std::chrono::milliseconds(700);
  EtcdAsyncClient lost(options, std::make_shared<EtcdClientCounters>(), 2);
  const Status timed_out = GetSync(lost, "/a/hole/k").first;
  EXPECT_EQ(timed_out.code(), Status::Code::kUnavailable) << timed_out.ToString();
  // A transaction that is not idempotent was sent: its outcome is unknown, so it is not retried.
  const Status unknown = PutIfAbsentSync(lost, "/a/hole/once", "x", false).first;
  EXPECT_EQ(unknown.code(), Status::Code::kUnavailable);
  EXPECT_NE(unknown.message().find("outcome unknown"), std::string::npos) << unknown.ToString();
}

TEST_F(EtcdAsync, CloseFailsWhatIsQueuedAndInFlight) {
  TcpRelay relay(cluster_->client_port(0));
  relay.Hold();
  EtcdAsyncClient client(Options({Local(relay.port())}), std::make_shared<EtcdClientCounters>(), 2);
  Tally tally;
  for (int i = 0; i < 5; ++i) client.Get("/a/close/k", tally.Get());
  ASSERT_TRUE(Eventually([&] { return relay.connections_holding() == 2; }));
  client.Close();
  EXPECT_EQ(tally.unavailable.load(), 5);
  client.Get("/a/close/k", tally.Get());  // after Close: at once
  EXPECT_EQ(tally.unavailable.load(), 6);
}

// The fence store's advance transactions on the pool: with max_txn_ops 4 and 40 keys waiting,
// four transactions are in flight at once (held by the relay), and all commit once released.
TEST_F(EtcdAsync, StoreRunsSeveralAdvanceTransactionsAtOnce) {
  TcpRelay relay(cluster_->client_port(0));
  EtcdFenceStoreOptions options;
  options.client = Options({Local(relay.port())});
  options.client.request_timeout = std::chrono::seconds(20);
  options.client.operation_timeout = std::chrono::seconds(30);
  options.prefix = "/a/store/";
  options.max_txn_ops = 4;
  options.connections_per_member = 4;
  options.probe_interval = std::chrono::seconds(60);
  std::unique_ptr<EtcdFenceStore> store;
  ASSERT_TRUE(EtcdFenceStore::Open(options, &store).ok());
  // The readiness probe has read through the relay, and waits a minute for the next read.
  ASSERT_TRUE(Eventually([&] { return store->Ready(); }));
  relay.Hold();
  Tally tally;
  std::atomic<int> below{0};
  for (int i = 0; i < 40; ++i) {
    const Token token = 1 + i;
    store->Advance("k" + std::to_string(i), token, 0,
                   [&, token](Status status, FenceRecord record) {
                     tally.Count(status);
                     if (status.ok() && record.highest < token) ++below;
                   });
  }
  ASSERT_TRUE(Eventually([&] { return relay.connections_holding() == 4; }))
      << relay.connections_holding();
  EXPECT_EQ(tally.total(), 0);  // none acknowledged before its transaction committed
  relay.Release();
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(tally.ok.load(), 40);
  EXPECT_EQ(below.load(), 0);
  EXPECT_GE(store->stats().in_flight_high_water, 4u);
  EXPECT_LE(store->stats().advance_txns, 40u / 4 + 1);
}

// Which member leads, asked of each member's gateway directly: "" when none says it leads.
std::string LeaderOf(const EtcdCluster& cluster, const std::vector<int>& alive) {
  for (int member : alive) {
    const auto response = integration::Fetch(
        cluster.client_port(member), integration::MakeRequest(integration::http::verb::post,
                                                              "/v3/maintenance/status", {}, "{}"));
    if (!response || response->result_int() != 200) continue;
    boost::system::error_code ec;
    const boost::json::value status = boost::json::parse(response->body(), ec);
    if (ec || !status.is_object()) continue;
    const auto* header = status.as_object().if_contains("header");
    const auto* leader = status.as_object().if_contains("leader");
    if (header == nullptr || leader == nullptr || !header->is_object()) continue;
    const auto* self = header->as_object().if_contains("member_id");
    if (self != nullptr && *self == *leader) return cluster.endpoints()[member];
  }
  return "";
}

// A 3-member cluster: the client prefers the leader it found; killed, the leader's successor
// takes over and the client finds and prefers it, operations going on meanwhile.
TEST(EtcdAsync3, PrefersTheLeaderAndFailsOverWhenItIsKilled) {
  std::string error;
  auto cluster = EtcdCluster::Start(3, &error);
  ASSERT_NE(cluster, nullptr) << error;
  auto counters = std::make_shared<EtcdClientCounters>();
  EtcdAsyncClient client(Options(cluster->endpoints()), counters, 2);
  ASSERT_TRUE(PutIfAbsentSync(client, "/a/kill/before", "x", true).first.ok());
  ASSERT_TRUE(Eventually([&] { return client.stats().leaders_found >= 1; }));
  const std::string leader = LeaderOf(*cluster, {0, 1, 2});
  ASSERT_FALSE(leader.empty());
  EXPECT_EQ(client.stats().preferred_endpoint, leader);
  const std::vector<std::string> endpoints = cluster->endpoints();
  const int killed =
      static_cast<int>(std::find(endpoints.begin(), endpoints.end(), leader) - endpoints.begin());
  cluster->Kill(killed);
  for (int i = 0; i < 5; ++i) {
    const auto [status, result] =
        PutIfAbsentSync(client, "/a/kill/after" + std::to_string(i), "x", true);
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(result.succeeded);
  }
  EXPECT_GE(counters->failovers.load(), 1u);
  std::vector<int> alive;
  for (int member = 0; member < 3; ++member) {
    if (member != killed) alive.push_back(member);
  }
  ASSERT_TRUE(Eventually([&] {
    const std::string next = LeaderOf(*cluster, alive);
    return !next.empty() && client.stats().leaders_found >= 2 &&
           client.stats().preferred_endpoint == next;
  })) << client.stats().preferred_endpoint;
  EXPECT_TRUE(GetSync(client, "/a/kill/before").second.has_value());
}

}  // namespace
}  // namespace fencegate::lockstore::etcd
