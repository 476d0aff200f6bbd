// Races at one Apache (mod_dav_fs) behind two fencegate instances with separate fence stores:
// the gateways' own checks cannot see each other's tokens, so only the backend can keep order.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <latch>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;
using integration::MakeRequest;

int EnvCount(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : fallback;
}

class WebdavRaceTest : public ApacheDavTest {
 protected:
  void SetUp() override {
    // Waiting for the other gateway's lock is the normal case here: up to 20 s per write.
    StartApacheAndGateways(2, LockRetries(4000, "5ms"));
  }
};

// Writers on both gateways take tokens from one counter, so each gateway keeps meeting tokens
// the other one has already written. The order in which Apache applied the writes is the order
// of the successful PUTs' arrival times in its access log: a PUT can only arrive once its
// LOCK is granted, i.e. after the previous holder's PUT was answered and its lock released.
TEST_F(WebdavRaceTest, TwoGatewaysNeverApplyALowerTokenAfterAHigherOne) {
  const int writers = EnvCount("WEBDAV_RACE_WRITERS", 8);
  const int writes = EnvCount("WEBDAV_RACE_WRITES", 60);
  constexpr int kObjects = 4;
  std::atomic<std::uint64_t> next_token{0};
  std::atomic<int> applied{0}, gateway_stale{0}, backend_fence{0}, lock_lost{0}, other{0};
  std::mutex mutex;
  std::map<std::string, std::uint64_t> highest_applied;  // per object, as the clients saw it
  std::vector<std::string> unexpected;

  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < gateways_.size(); ++g) {
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, port = gateways_[g]->port(), w] {
        integration::HttpConnection connection(std::chrono::seconds(60));
        bool connected = false;
        for (int i = 0; i < writes; ++i) {
          const std::string path = "/dav/obj-" + std::to_string((w + i) % kObjects);
          const std::uint64_t token = ++next_token;
          if (!connected) connected = connection.Connect(port);
          auto response = connection.RoundTrip(MakeRequest(
              http::verb::put, path,
              {{"Fencing-Token", std::to_string(token)}, {"X-Write-Token", std::to_string(token)}},
              std::to_string(token)));
          if (!response) {
            connected = false;
            ++other;
            std::lock_guard lock(mutex);
            unexpected.push_back("no response: " + connection.error());
            continue;
          }
          const unsigned status = response->result_int();
          if (status == 201 || status == 204) {
            ++applied;
            std::lock_guard lock(mutex);
            highest_applied[path] = std::max(highest_applied[path], token);
          } else if (status == 409 && ProblemReason(response->body()) == "backend_fence") {
            ++backend_fence;
          } else if (status == 409 && ProblemReason(response->body()) == "stale_token") {
            ++gateway_stale;
          } else if (status == 503 && ProblemType(response->body()) == "webdav-lock-lost") {
            // Apache replaced this write's lock with a racing grant (see the LOCK test below):
            // refused, nothing written.
            ++lock_lost;
          } else {
            ++other;
            std::lock_guard lock(mutex);
            unexpected.push_back(std::to_string(status) + " " + response->body());
          }
          if (!response->keep_alive()) connected = false;
        }
      });
    }
  }
  for (auto& thread : threads) thread.join();

  // Order the applied PUTs as Apache applied them and look for a token below an earlier one.
  std::vector<LogLine> puts;
  for (auto& line : ReadAccessLog(apache_->access_log())) {
    if (line.method == "PUT" && (line.status == 201 || line.status == 204) && line.write_token) {
      puts.push_back(std::move(line));
    }
  }
  std::stable_sort(puts.begin(), puts.end(),
                   [](const LogLine& a, const LogLine& b) { return a.begin_usec < b.begin_usec; });
  int lower_overwrites = 0;
  std::map<std::string, std::uint64_t> highest_so_far;
  for (const LogLine& line : puts) {
    std::uint64_t& highest = highest_so_far[line.path];
    if (*line.write_token < highest) ++lower_overwrites;
    highest = std::max(highest, *line.write_token);
  }

  const int total = static_cast<int>(gateways_.size()) * writers * writes;
  std::cout << "webdav race: " << gateways_.size() << " gateways x " << writers << " writers x "
            << writes << " writes (" << kObjects << " objects): " << applied << " applied, "
            << backend_fence << " refused by the backend (backend_fence), " << gateway_stale
            << " refused by a gateway (stale_token), " << lock_lost
            << " refused as lock lost (503), " << other << " other; " << lower_overwrites
            << " lower-token overwrites" << std::endl;
  RecordProperty("lower_token_overwrites", lower_overwrites);
  RecordProperty("backend_fence_refusals", backend_fence.load());

  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " unexpected, first: "
                                  << (unexpected.empty() ? "" : unexpected.front());
  EXPECT_EQ(applied + backend_fence + gateway_stale + lock_lost + other, total);
  EXPECT_EQ(static_cast<int>(puts.size()), applied.load())
      << "every write a client saw applied is in Apache's log, and no other";
  EXPECT_EQ(lower_overwrites, 0);
  // What is left at the backend is the highest applied write, with its token.
  for (const auto& [path, token] : highest_applied) {
    EXPECT_EQ(Send(apache_->port(), MakeRequest(http::verb::get, path)).body(),
              std::to_string(token))
        << path;
    EXPECT_EQ(StoredToken(apache_->port(), path), token) << path;
  }
}

// Apache checks If-None-Match and then writes, without holding anything in between: creators
// racing on a new path can both get 201. Through the gateway the same requests run under the
// adapter's LOCK, which Apache grants to one at a time, so exactly one creator wins each round.
TEST_F(WebdavRaceTest, IfNoneMatchCreateIsOnlyExclusiveUnderTheLock) {
  const int rounds = EnvCount("WEBDAV_CREATE_ROUNDS", 40);
  constexpr int kRacers = 8;
  // A body of some size widens Apache's window between its check and its rename.
  const std::string body(256 * 1024, 'c');

  auto race = [&](const std::string& prefix, bool through_gateways) {
    int rounds_with_several_winners = 0;
    int total_winners = 0;
    for (int round = 0; round < rounds; ++round) {
      const std::string path = prefix + std::to_string(round);
      std::atomic<int> winners{0};
      std::latch start(kRacers);
      std::vector<std::thread> racers;
      for (int r = 0; r < kRacers; ++r) {
        racers.emplace_back([&, r] {
          const std::uint16_t port =
              through_gateways ? gateways_[r % gateways_.size()]->port() : apache_->port();
          integration::HttpConnection connection(std::chrono::seconds(60));
          const bool connected = connection.Connect(port);
          start.arrive_and_wait();
          if (!connected) return;
          // One holder (token 1) creating from several places at once.
          auto response = connection.RoundTrip(MakeRequest(
              http::verb::put, path, {{"If-None-Match", "*"}, {"Fencing-Token", "1"}}, body));
          if (response && response->result_int() == 201) ++winners;
        });
      }
      for (auto& racer : racers) racer.join();
      total_winners += winners;
      if (winners > 1) ++rounds_with_several_winners;
    }
    return std::pair{rounds_with_several_winners, total_winners};
  };

  const auto [plain_double, plain_winners] = race("/dav/plain-", false);
  const auto [locked_double, locked_winners] = race("/dav/locked-", true);
  std::cout << "If-None-Match: * create race, " << rounds << " rounds x " << kRacers
            << " racers: plain Apache: " << plain_double << " rounds with more than one 201 ("
            << plain_winners << " winners); through 2 gateways (LOCK): " << locked_double
            << " rounds with more than one 201 (" << locked_winners << " winners)" << std::endl;
  RecordProperty("plain_rounds_with_several_winners", plain_double);
  RecordProperty("locked_rounds_with_several_winners", locked_double);

  EXPECT_EQ(locked_double, 0);
  EXPECT_EQ(locked_winners, rounds) << "each round has exactly one creator";
  // Every plain round has at least one winner; how often there are several varies from run to
  // run (it is a race), so it is reported, not asserted.
  EXPECT_GE(plain_winners, rounds);
}

// What the adapter relies on, and what it does not: Apache's exclusive LOCK is not atomic either
// (two racing LOCKs can both get 200: its lock database is read, then written), but the later
// grant replaces the earlier one, so afterwards only one of the lock tokens is honoured by
// requests that carry it in If. Every step of a fenced write carries its token, so the holder
// whose grant was replaced is refused (412) instead of writing.
TEST_F(WebdavRaceTest, RacingLocksMayBothBeGrantedButOnlyOneTokenIsHonoured) {
  const int rounds = EnvCount("WEBDAV_LOCK_ROUNDS", 60);
  constexpr int kRacers = 8;
  const std::uint16_t port = apache_->port();
  const std::string lock_body =
      "<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/>"
      "</D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>";
  const std::string patch_body =
      "<?xml version=\"1.0\"?><D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><x:p "
      "xmlns:x=\"urn:test\">1</x:p></D:prop></D:set></D:propertyupdate>";
  int double_grants = 0, several_honoured = 0;
  for (int round = 0; round < rounds; ++round) {
    const std::string path = "/dav/lock-race-" + std::to_string(round);
    ASSERT_EQ(Send(port, MakeRequest(http::verb::put, path, {}, "x")).result_int(), 201);
    std::mutex mutex;
    std::vector<std::string> granted;
    std::latch start(kRacers);
    std::vector<std::thread> racers;
    for (int r = 0; r < kRacers; ++r) {
      racers.emplace_back([&] {
        integration::HttpConnection connection(std::chrono::seconds(60));
        const bool connected = connection.Connect(port);
        start.arrive_and_wait();
        if (!connected) return;
        auto response = connection.RoundTrip(
            MakeRequest(http::verb::lock, path, {{"Timeout", "Second-60"}}, lock_body));
        if (response && response->result_int() == 200) {
          std::lock_guard lock(mutex);
          granted.emplace_back((*response)["Lock-Token"]);
        }
      });
    }
    for (auto& racer : racers) racer.join();
    ASSERT_GE(granted.size(), 1u);
    if (granted.size() < 2) continue;
    ++double_grants;
    int honoured = 0;
    for (const std::string& token : granted) {
      auto patched = Send(
          port, MakeRequest(http::verb::proppatch, path, {{"If", "(" + token + ")"}}, patch_body));
      if (patched.result_int() == 207) ++honoured;
    }
    EXPECT_EQ(honoured, 1) << path;
    if (honoured > 1) ++several_honoured;
  }
  std::cout << "racing exclusive LOCKs, " << rounds << " rounds x " << kRacers
            << " racers straight at Apache: " << double_grants
            << " rounds granted more than one lock; " << several_honoured
            << " of them honoured more than one token" << std::endl;
  RecordProperty("lock_double_grants", double_grants);
  EXPECT_EQ(several_honoured, 0);
}

}  // namespace
}  // namespace fencegate::webdav_test
