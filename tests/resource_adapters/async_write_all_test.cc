// AsyncWriteAll and SendAtOnce (base/net/gathered_write.h) over a real loopback TCP
// connection whose send buffer is far smaller than the large writes, so the kernel takes those
// in many short writes.
#include <cstddef>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>

#include "base/net/gathered_write.h"

namespace fencegate::adapters {
namespace {

namespace net = boost::asio;
using net::ip::tcp;

// The socket, counting the writes AsyncWriteAll starts on it.
struct CountingStream {
  template <class Buffers, class Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    ++writes;
    socket.async_write_some(buffers, std::forward<Handler>(handler));
  }
  tcp::socket& socket;
  int writes = 0;
};

class AsyncWriteAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tcp::acceptor acceptor(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    writer_.connect(acceptor.local_endpoint());
    acceptor.accept(reader_);
    writer_.set_option(net::socket_base::send_buffer_size(16384));
    reader_.set_option(net::socket_base::receive_buffer_size(16384));
  }

  static std::string Pattern(std::size_t size, char seed) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(seed + i % 61);
    return bytes;
  }

  net::io_context ioc_;
  tcp::socket writer_{ioc_};
  tcp::socket reader_{ioc_};
};

TEST_F(AsyncWriteAllTest, ShortWritesStillDeliverEveryBufferInOrder) {
  const std::string head = Pattern(1000, 'a');
  const std::string body = Pattern(256 << 10, 'A');
  const std::string tail = Pattern(7, '0');
  WriteGather gather{net::buffer(head), net::buffer(body), net::buffer(tail)};
  const std::size_t total = head.size() + body.size() + tail.size();

  bool written = false;
  boost::system::error_code write_error;
  CountingStream stream{writer_};
  AsyncWriteAll(stream, gather, [&](boost::system::error_code ec) {
    written = true;
    write_error = ec;
  });
  std::string received(total, '\0');
  std::size_t read_total = 0;
  net::async_read(reader_, net::buffer(received),
                  [&](boost::system::error_code, std::size_t bytes) { read_total = bytes; });
  ioc_.run();

  ASSERT_TRUE(written);
  EXPECT_FALSE(write_error);
  ASSERT_EQ(read_total, total);
  EXPECT_TRUE(received == head + body + tail);
  // The kernel took it in several short writes, and the gather was consumed in place.
  EXPECT_GT(stream.writes, 1);
  EXPECT_EQ(net::buffer_size(gather), 0u);
}

TEST_F(AsyncWriteAllTest, EmptyBuffersCompleteWithoutError) {
  WriteGather gather{};
  bool written = false;
  AsyncWriteAll(writer_, gather, [&](boost::system::error_code ec) {
    written = true;
    EXPECT_FALSE(ec);
  });
  ioc_.run();
  EXPECT_TRUE(written);
}

TEST_F(AsyncWriteAllTest, APeerThatIsGoneFailsTheWrite) {
  reader_.close();
  const std::string body = Pattern(4 << 20, 'z');
  WriteGather gather{net::buffer(body), {}, {}};
  boost::system::error_code write_error;
  AsyncWriteAll(writer_, gather, [&](boost::system::error_code ec) { write_error = ec; });
  ioc_.run();
  EXPECT_TRUE(write_error);  // broken pipe or connection reset, never a silent success
}

TEST_F(AsyncWriteAllTest, SendAtOnceWritesASmallGatherWhole) {
  const std::string head = Pattern(300, 'h');
  const std::string body = Pattern(1024, 'B');
  const std::string tail = "\r\n0\r\n\r\n";
  WriteGather gather{net::buffer(head), net::buffer(body), net::buffer(tail)};
  const std::size_t total = head.size() + body.size() + tail.size();

  ASSERT_TRUE(SendAtOnce(writer_.native_handle(), gather));
  EXPECT_EQ(net::buffer_size(gather), 0u);
  std::string received(total, '\0');
  ASSERT_EQ(net::read(reader_, net::buffer(received)), total);
  EXPECT_TRUE(received == head + body + tail);
}

TEST_F(AsyncWriteAllTest, SendAtOnceLeavesWhatTheSocketCannotTakeForTheAsynchronousWrite) {
  const std::string head = Pattern(500, 'h');
  const std::string body = Pattern(4 << 20, 'Q');
  WriteGather gather{net::buffer(head), net::buffer(body), {}};
  const std::size_t total = head.size() + body.size();

  // The socket takes a part, never blocks, and the gather keeps exactly the rest.
  ASSERT_FALSE(SendAtOnce(writer_.native_handle(), gather));
  const std::size_t left = net::buffer_size(gather);
  EXPECT_GT(left, 0u);
  EXPECT_LT(left, total);

  bool written = false;
  AsyncWriteAll(writer_, gather, [&](boost::system::error_code ec) { written = !ec; });
  std::string received(total, '\0');
  std::size_t read_total = 0;
  net::async_read(reader_, net::buffer(received),
                  [&](boost::system::error_code, std::size_t bytes) { read_total = bytes; });
  ioc_.run();
  EXPECT_TRUE(written);
  ASSERT_EQ(read_total, total);
  EXPECT_TRUE(received == head + body);
}

TEST_F(AsyncWriteAllTest, SendAtOnceOnAFailedSocketConsumesNothing) {
  writer_.shutdown(tcp::socket::shutdown_send);
  const std::string body = Pattern(100, 'x');
  WriteGather gather{net::buffer(body), {}, {}};
  EXPECT_FALSE(SendAtOnce(writer_.native_handle(), gather));
  EXPECT_EQ(net::buffer_size(gather), body.size());
  // The asynchronous write that follows meets the error and reports it.
  boost::system::error_code write_error;
  AsyncWriteAll(writer_, gather, [&](boost::system::error_code ec) { write_error = ec; });
  ioc_.run();
  EXPECT_EQ(write_error, net::error::broken_pipe);
}

TEST_F(AsyncWriteAllTest, SendAtOnceOfNothingIsDone) {
  WriteGather gather{};
  EXPECT_TRUE(SendAtOnce(writer_.native_handle(), gather));
}

}  // namespace
}  // namespace fencegate::adapters
