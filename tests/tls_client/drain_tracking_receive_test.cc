// AsyncReceiveTrackingDrain (base/tls_client/drain_tracking_receive.h) over a real loopback TCP
// connection: after a read that emptied the socket, the next read waits for the reactor's next
// readiness edge instead of trying recv first, so every test here checks that bytes arriving at
// any moment after such a read are still delivered, in order, and that errors, cancellation
// and shutdown complete the operation as Asio's own read does.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "base/tls_client/drain_tracking_receive.h"

namespace fencegate::tls_client {
namespace {

namespace net = boost::asio;
using boost::system::error_code;
using net::ip::tcp;

// What one read delivered.
struct ReadResult {
  error_code ec;
  std::string bytes;
};

class DrainTrackingReceiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tcp::acceptor acceptor(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    peer_.connect(acceptor.local_endpoint());
    acceptor.accept(reader_);
  }

  void PeerWrites(const std::string& bytes) { net::write(peer_, net::buffer(bytes)); }

  // Starts one read of at most `size` bytes whose result lands in `result`.
  void StartRead(std::size_t size, std::optional<ReadResult>& result) {
    auto buffer = std::make_shared<std::string>(size, '\0');
    AsyncReceiveTrackingDrain(reader_, net::buffer(*buffer),
                              [buffer, &result](error_code ec, std::size_t bytes) {
                                result = ReadResult{ec, buffer->substr(0, bytes)};
                              });
  }

  // Runs the loop until `result` is set, bounded in time.
  void RunUntil(const std::optional<ReadResult>& result) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!result && std::chrono::steady_clock::now() < deadline) {
      ioc_.restart();
      ioc_.run_for(std::chrono::milliseconds(20));
    }
  }

  // One read of at most `size` bytes, the loop run until it completes (bounded): empty if it
  // did not.
  std::optional<ReadResult> Read(std::size_t size) {
    std::optional<ReadResult> result;
    StartRead(size, result);
    RunUntil(result);
    return result;
  }

  net::io_context ioc_;
  tcp::socket peer_{ioc_};
  tcp::socket reader_{ioc_};
};

TEST_F(DrainTrackingReceiveTest, HandlerNeverRunsInsideTheCall) {
  PeerWrites("ready");
  std::optional<ReadResult> result;
  StartRead(64, result);
  EXPECT_FALSE(result);
  RunUntil(result);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->ec);
  EXPECT_EQ(result->bytes, "ready");
}

TEST_F(DrainTrackingReceiveTest, BytesArrivingBetweenAShortReadAndItsHandlerAreDelivered) {
  // The first read runs at once inside the call (the bytes are there) and empties the socket;
  // the next bytes arrive before its handler runs, and the second read, started after it,
  // waits without trying recv first: the readiness edge of the second write must reach it.
  PeerWrites("abc");
  std::optional<ReadResult> first;
  StartRead(64, first);
  PeerWrites("def");
  RunUntil(first);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->bytes, "abc");
  const auto second = Read(64);
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->ec);
  EXPECT_EQ(second->bytes, "def");
}

TEST_F(DrainTrackingReceiveTest, BytesArrivingWhileNoReadIsPendingAreDelivered) {
  PeerWrites("abc");
  ASSERT_TRUE(Read(64));
  // The edge of these bytes is seen by the reactor while no read waits on the socket.
  PeerWrites("later");
  ioc_.restart();
  ioc_.poll();
  const auto second = Read(64);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->bytes, "later");
}

TEST_F(DrainTrackingReceiveTest, ReadsThatFillTheirBufferLeaveTheRestReadable) {
  std::string sent;
  for (int i = 0; i < 100; ++i) sent += static_cast<char>('a' + i % 26);
  PeerWrites(sent);
  std::string received;
  while (received.size() < sent.size()) {
    const auto result = Read(10);
    ASSERT_TRUE(result);
    ASSERT_FALSE(result->ec) << result->ec.message();
    received += result->bytes;
  }
  EXPECT_EQ(received, sent);
  // The socket is empty now, but the last read filled its buffer, so nothing said it was
  // empty: this read tries recv, waits, and gets the bytes written after it started.
  std::optional<ReadResult> result;
  StartRead(10, result);
  ioc_.restart();
  ioc_.poll();
  EXPECT_FALSE(result);
  PeerWrites("xyz");
  RunUntil(result);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->bytes, "xyz");
}

TEST_F(DrainTrackingReceiveTest, PingPongRoundsAllComplete) {
  // A keep-alive connection's pattern: each read empties the socket, the next bytes arrive
  // only after the reader answered.
  for (int round = 0; round < 300; ++round) {
    std::optional<ReadResult> result;
    StartRead(64, result);
    const std::string request = "request " + std::to_string(round);
    PeerWrites(request);
    RunUntil(result);
    ASSERT_TRUE(result) << "round " << round;
    ASSERT_EQ(result->bytes, request);
    net::write(reader_, net::buffer("ok", 2));
    char answer[2];
    net::read(peer_, net::buffer(answer));
  }
}

TEST_F(DrainTrackingReceiveTest, EndOfStreamAfterAShortRead) {
  PeerWrites("last");
  ASSERT_TRUE(Read(64));
  std::optional<ReadResult> second;
  StartRead(64, second);
  peer_.shutdown(tcp::socket::shutdown_send);
  RunUntil(second);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->ec, net::error::eof);
  EXPECT_EQ(second->bytes, "");
}

TEST_F(DrainTrackingReceiveTest, ResetIsReportedAsAnError) {
  std::optional<ReadResult> result;
  StartRead(64, result);
  peer_.set_option(net::socket_base::linger(true, 0));
  peer_.close();
  RunUntil(result);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->ec, net::error::connection_reset);
}

TEST_F(DrainTrackingReceiveTest, CancelCompletesAPendingReadWithOperationAborted) {
  std::optional<ReadResult> result;
  StartRead(64, result);
  ioc_.poll();
  EXPECT_FALSE(result);
  reader_.cancel();
  RunUntil(result);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->ec, net::error::operation_aborted);
  // The socket still works after the cancelled read.
  std::optional<ReadResult> next;
  StartRead(64, next);
  PeerWrites("again");
  RunUntil(next);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->bytes, "again");
}

TEST_F(DrainTrackingReceiveTest, HandlerBoundToAnotherExecutorRunsOnIt) {
  net::io_context other;
  bool called = false;
  std::string received;
  auto buffer = std::make_shared<std::string>(64, '\0');
  AsyncReceiveTrackingDrain(
      reader_, net::buffer(*buffer),
      net::bind_executor(other, [&, buffer](error_code ec, std::size_t bytes) {
        EXPECT_FALSE(ec);
        called = true;
        received = buffer->substr(0, bytes);
      }));
  PeerWrites("elsewhere");
  ioc_.run_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(called);
  other.run_for(std::chrono::seconds(5));
  EXPECT_TRUE(called);
  EXPECT_EQ(received, "elsewhere");
}

TEST(DrainTrackingReceiveShutdownTest, APendingReadIsDestroyedWithItsContextUncalled) {
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  bool called = false;
  {
    net::io_context ioc;
    tcp::acceptor acceptor(ioc, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    tcp::socket peer(ioc);
    tcp::socket reader(ioc);
    peer.connect(acceptor.local_endpoint());
    acceptor.accept(reader);
    auto buffer = std::make_shared<std::string>(64, '\0');
    AsyncReceiveTrackingDrain(
        reader, net::buffer(*buffer),
        [&called, buffer, alive = std::move(alive)](error_code, std::size_t) { called = true; });
    ioc.poll();
    EXPECT_FALSE(watch.expired());
    // The socket goes first here, as in a session torn down with its thread: the read
    // completes aborted into the queue, and the context's destruction drops it.
    reader.close();
  }
  EXPECT_FALSE(called);
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace fencegate::tls_client
