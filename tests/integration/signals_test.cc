// Signals operators' tools send (logrotate's USR1, haproxy-style USR2 reloads, SIGPIPE from a
// closed pipe) never end the gateway; USR1 reopens the access log.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/held_put.h"
#include "tests/support/http_gateway_fixture.h"
#include "tests/support/lock_test_support.h"

namespace fencegate::integration {
namespace {

using SignalsTest = HttpGatewayTest;

// The request ids of the file's finished lines (a line being appended meanwhile is left for the
// next look); a line that is not one whole JSON object fails the test.
std::vector<std::string> LoggedRequestIds(const std::string& path) {
  std::vector<std::string> ids;
  std::string text = ReadWholeFile(path);
  text.erase(text.find_last_of('\n') + 1);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    boost::system::error_code ec;
    const boost::json::value parsed = boost::json::parse(line, ec);
    if (ec || !parsed.is_object()) {
      ADD_FAILURE() << path << ": torn line: " << line;
      continue;
    }
    ids.emplace_back(parsed.at("request_id").as_string());
  }
  return ids;
}

bool Contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// The line of a request is written just after its answer: waits until `path` holds `id`.
bool AwaitLine(const std::string& path, const std::string& id) {
  return Eventually([&] { return Contains(LoggedRequestIds(path), id); });
}

TEST_F(SignalsTest, UsrAndPipeSignalsDuringARequestLeaveTheGatewayServing) {
  auto held = PutHeldAtBackend(gateway_->traffic_port(), "/kv/s/x", "1", 1500, "held");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(10)));
  for (const int signal_number : {SIGUSR1, SIGUSR2, SIGPIPE}) {
    gateway_->process().Signal(signal_number);
  }
  const std::optional<Response> response = held.get();
  ASSERT_TRUE(response.has_value()) << gateway_->process().Stderr();
  EXPECT_EQ(response->result_int(), 200);
  EXPECT_FALSE(gateway_->process().Wait(std::chrono::milliseconds(0)).has_value());
  EXPECT_EQ(Put("/kv/s/x", "2", "after").result_int(), 200);
}

// logrotate without copytruncate: rename the file, then USR1. Lines of requests answered after
// the reopen go to a new file at the configured path, earlier ones stayed in the renamed one.
TEST_F(SignalsTest, Usr1ReopensTheAccessLogAfterARename) {
  const std::string log = dir_.Join("access.log");
  const std::string rotated = dir_.Join("access.log.1");
  const std::string before(Put("/kv/r/x", "1", "before")["X-Request-Id"]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  ASSERT_TRUE(AwaitLine(log, before));
  std::filesystem::rename(log, rotated);
  gateway_->process().Signal(SIGUSR1);

  // Until the gateway has reopened, a line may still go to the renamed file: send requests
  // until one lands in the new file, then every later one must land there too.
  std::string first_new;
  while (first_new.empty() && std::chrono::steady_clock::now() < deadline) {
    const std::string id(Put("/kv/r/x", "1", "during")["X-Request-Id"]);
    // The answer precedes its log line: wait for the line to reach one of the two files.
    bool in_new_file = false;
    Eventually([&] {
      in_new_file = std::filesystem::exists(log) && Contains(LoggedRequestIds(log), id);
      return in_new_file || Contains(LoggedRequestIds(rotated), id);
    });
    if (in_new_file) first_new = id;
  }
  ASSERT_FALSE(first_new.empty()) << "no line in a new " << log
                                  << "; stderr: " << gateway_->process().Stderr();
  std::vector<std::string> after;
  for (int i = 0; i < 5; ++i) after.emplace_back(Put("/kv/r/x", "1", "after")["X-Request-Id"]);
  for (const std::string& id : after) {
    EXPECT_TRUE(AwaitLine(log, id)) << id;
    EXPECT_FALSE(Contains(LoggedRequestIds(rotated), id)) << id;
  }
  EXPECT_TRUE(Contains(LoggedRequestIds(rotated), before));
  EXPECT_FALSE(Contains(LoggedRequestIds(log), before));
}

}  // namespace
}  // namespace fencegate::integration
