#include "resource_adapters/transport/upstream_connection_pool.h"

#include <poll.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "base/net/deadline_clock.h"
#include "tests/support/eventually.h"

namespace fencegate::adapters {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Stream = UpstreamConnectionPool::Stream;
using Probe = UpstreamConnectionPool::Probe;

// Real loopback connections: the pool's client ends on one io_context, the backend ends as
// blocking sockets the test writes to and closes.
class UpstreamConnectionPoolTest : public ::testing::Test {
 protected:
  UpstreamConnectionPoolTest()
      : acceptor_(backend_ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {}

  // A connected client stream and the backend's end of it.
  std::pair<std::unique_ptr<Stream>, tcp::socket> Connect() {
    auto stream = std::make_unique<Stream>(ioc_, nullptr, 0, 0, ServerConnectionSlot());
    stream->socket().connect(acceptor_.local_endpoint());
    tcp::socket backend = acceptor_.accept();
    return {std::move(stream), std::move(backend)};
  }

  // What the backend's end reads next: end of stream once the pool closed its side.
  static boost::system::error_code BackendReadError(tcp::socket& backend) {
    char byte;
    boost::system::error_code ec;
    backend.read_some(asio::buffer(&byte, 1), ec);
    return ec;
  }

  // Waits until the kernel reports the FIN or data the backend sent readable on `stream`.
  static void WaitUntilReadable(Stream& stream) {
    pollfd readable{stream.socket().native_handle(), POLLIN, 0};
    ASSERT_EQ(poll(&readable, 1, 10'000), 1) << "nothing arrived from the backend";
  }

  asio::io_context ioc_;
  asio::io_context backend_ioc_;
  tcp::acceptor acceptor_;
};

TEST_F(UpstreamConnectionPoolTest, LastGivenIsFirstTaken) {
  UpstreamConnectionPool pool(4, std::chrono::seconds(60));
  auto [older, older_backend] = Connect();
  auto [newer, newer_backend] = Connect();
  Stream* older_raw = older.get();
  Stream* newer_raw = newer.get();
  pool.Give(std::move(older));
  pool.Give(std::move(newer));
  EXPECT_EQ(pool.idle_count(), 2u);
  EXPECT_EQ(pool.Take(Probe::kPeek).get(), newer_raw);
  EXPECT_EQ(pool.Take(Probe::kOnUse).get(), older_raw);
  EXPECT_EQ(pool.Take(Probe::kPeek), nullptr);
}

TEST_F(UpstreamConnectionPoolTest, PeekLeavesTheBytesOfAnAliveConnectionAlone) {
  UpstreamConnectionPool pool(4, std::chrono::seconds(60));
  auto [stream, backend] = Connect();
  pool.Give(std::move(stream));
  auto taken = pool.Take(Probe::kPeek);
  ASSERT_NE(taken, nullptr);
  // The response to the next request is read whole: the probe consumed nothing.
  asio::write(backend, asio::buffer(std::string("pong")));
  std::string received(4, '\0');
  asio::read(taken->socket(), asio::buffer(received));
  EXPECT_EQ(received, "pong");
}

TEST_F(UpstreamConnectionPoolTest, PeekDropsAConnectionTheBackendClosed) {
  UpstreamConnectionPool pool(4, std::chrono::seconds(60));
  auto [alive, alive_backend] = Connect();
  auto [closed, closed_backend] = Connect();
  Stream* alive_raw = alive.get();
  Stream* closed_raw = closed.get();
  pool.Give(std::move(alive));
  pool.Give(std::move(closed));
  closed_backend.close();
  WaitUntilReadable(*closed_raw);
  // The closed one is newer, so first in line: it is closed and the next one taken.
  EXPECT_EQ(pool.Take(Probe::kPeek).get(), alive_raw);
  EXPECT_EQ(pool.idle_count(), 0u);
}

TEST_F(UpstreamConnectionPoolTest, PeekDropsAConnectionWithUnsolicitedBytes) {
  UpstreamConnectionPool pool(4, std::chrono::seconds(60));
  auto [stream, backend] = Connect();
  Stream* stream_raw = stream.get();
  pool.Give(std::move(stream));
  // Bytes on an idle connection answer no request: the stream is out of step.
  asio::write(backend, asio::buffer(std::string("HTTP/1.1 200 OK\r\n\r\n")));
  WaitUntilReadable(*stream_raw);
  EXPECT_EQ(pool.Take(Probe::kPeek), nullptr);
  EXPECT_EQ(BackendReadError(backend), asio::error::eof);
}

TEST_F(UpstreamConnectionPoolTest, OnUseHandsOutAClosedConnectionUnlooked) {
  UpstreamConnectionPool pool(4, std::chrono::seconds(60));
  auto [stream, backend] = Connect();
  Stream* stream_raw = stream.get();
  pool.Give(std::move(stream));
  backend.close();
  WaitUntilReadable(*stream_raw);
  // The caller finds out on use, and sends its request again on a fresh connection.
  auto taken = pool.Take(Probe::kOnUse);
  ASSERT_NE(taken, nullptr);
  char byte;
  boost::system::error_code ec;
  taken->socket().read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof);
}

TEST_F(UpstreamConnectionPoolTest, ExpiredConnectionIsClosedWhicheverTheProbe) {
  UpstreamConnectionPool pool(4, std::chrono::milliseconds(1));
  auto [stream, backend] = Connect();
  pool.Give(std::move(stream));
  // The clock is the subject, and it is the pool's: DeadlineClock moves in kernel ticks, which
  // a busy machine may deliver late, so wait until that clock is past the 1 ms the pool keeps
  // the connection rather than for a fixed time on another clock.
  const auto given = DeadlineClock::Now();
  ASSERT_TRUE(integration::Eventually(
      [&] { return DeadlineClock::Now() - given > std::chrono::milliseconds(1); }));
  EXPECT_EQ(pool.Take(Probe::kOnUse), nullptr);
  EXPECT_EQ(pool.idle_count(), 0u);
  EXPECT_EQ(BackendReadError(backend), asio::error::eof);
}

TEST_F(UpstreamConnectionPoolTest, FullPoolClosesTheOldestConnection) {
  UpstreamConnectionPool pool(1, std::chrono::seconds(60));
  auto [older, older_backend] = Connect();
  auto [newer, newer_backend] = Connect();
  Stream* newer_raw = newer.get();
  pool.Give(std::move(older));
  pool.Give(std::move(newer));
  EXPECT_EQ(pool.idle_count(), 1u);
  EXPECT_EQ(BackendReadError(older_backend), asio::error::eof);
  EXPECT_EQ(pool.Take(Probe::kPeek).get(), newer_raw);
}

TEST_F(UpstreamConnectionPoolTest, ZeroSizedPoolKeepsNothing) {
  UpstreamConnectionPool pool(0, std::chrono::seconds(60));
  auto [stream, backend] = Connect();
  pool.Give(std::move(stream));
  EXPECT_EQ(pool.idle_count(), 0u);
  EXPECT_EQ(BackendReadError(backend), asio::error::eof);
}

}  // namespace
}  // namespace fencegate::adapters
