#include "tests/support/tcp_relay.h"

#include <array>
#include <atomic>
#include <future>
#include <list>
#include <string>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

namespace fencegate::integration {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// One client connection and its connection to the member. Everything runs on the relay's thread.
struct Pair : std::enable_shared_from_this<Pair> {
  explicit Pair(net::io_context& ioc) : client(ioc), member(ioc) {}
  tcp::socket client;
  tcp::socket member;
  std::array<char, 16384> up{};    // client -> member
  std::array<char, 16384> down{};  // member -> client
  std::string pending;             // read from the client, not yet passed on
  std::string writing;             // being passed on
  bool closed = false;

  void Close() {
    if (closed) return;
    closed = true;
    error_code ignored;
    client.close(ignored);
    member.close(ignored);
  }
};

}  // namespace

class TcpRelay::Impl {
 public:
  explicit Impl(std::uint16_t target_port)
      : target_(net::ip::make_address("127.0.0.1"), target_port),
        acceptor_(ioc_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
    Accept();
    thread_ = std::thread([this] { ioc_.run(); });
  }

  ~Impl() {
    net::post(ioc_, [this] {
      error_code ignored;
      acceptor_.close(ignored);
      for (const auto& pair : pairs_) pair->Close();
    });
    thread_.join();
  }

  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

  void Hold() {
    net::post(ioc_, [this] { held_ = true; });
  }

  void LoseAnswers() {
    net::post(ioc_, [this] { lose_answers_ = true; });
  }

  void Release() {
    net::post(ioc_, [this] {
      held_ = false;
      lose_answers_ = false;
      for (const auto& pair : pairs_) PassOn(pair);
      Count();
    });
  }

  void CloseAll() {
    std::promise<void> closed;
    net::post(ioc_, [this, &closed] {
      while (!pairs_.empty()) End(pairs_.front());
      closed.set_value();
    });
    closed.get_future().wait();
  }

  std::atomic<int> accepted{0};
  std::atomic<int> open{0};
  std::atomic<int> holding{0};
  std::atomic<int> lost{0};

 private:
  void Accept() {
    auto pair = std::make_shared<Pair>(ioc_);
    acceptor_.async_accept(pair->client, [this, pair](error_code ec) {
      if (ec) return;
      pairs_.push_back(pair);
      ++accepted;
      ++open;
      pair->member.async_connect(target_, [this, pair](error_code ec) {
        if (ec) return End(pair);
        Up(pair);
        Down(pair);
      });
      Accept();
    });
  }

  void Up(const std::shared_ptr<Pair>& pair) {
    pair->client.async_read_some(net::buffer(pair->up), [this, pair](error_code ec, std::size_t n) {
      if (ec) return End(pair);
      pair->pending.append(pair->up.data(), n);
      PassOn(pair);
      Count();
      Up(pair);
    });
  }

  void PassOn(const std::shared_ptr<Pair>& pair) {
    if (held_ || pair->closed || !pair->writing.empty() || pair->pending.empty()) return;
    pair->writing.swap(pair->pending);
    net::async_write(pair->member, net::buffer(pair->writing),
                     [this, pair](error_code ec, std::size_t) {
                       pair->writing.clear();
                       if (ec) return End(pair);
                       PassOn(pair);
                     });
  }

  void Down(const std::shared_ptr<Pair>& pair) {
    pair->member.async_read_some(net::buffer(pair->down),
                                 [this, pair](error_code ec, std::size_t n) {
                                   if (ec) return End(pair);
                                   if (lose_answers_) {
                                     ++lost;
                                     return Down(pair);
                                   }
                                   net::async_write(pair->client, net::buffer(pair->down.data(), n),
                                                    [this, pair](error_code ec, std::size_t) {
                                                      if (ec) return End(pair);
                                                      Down(pair);
                                                    });
                                 });
  }

  void End(const std::shared_ptr<Pair>& pair) {
    if (pair->closed) return;
    pair->Close();
    pairs_.remove(pair);
    --open;
    Count();
  }

  void Count() {
    int count = 0;
    for (const auto& pair : pairs_) count += pair->pending.empty() ? 0 : 1;
    holding = count;
  }

  const tcp::endpoint target_;
  net::io_context ioc_{1};
  tcp::acceptor acceptor_;
  std::list<std::shared_ptr<Pair>> pairs_;
  bool held_ = false;
  bool lose_answers_ = false;
  std::thread thread_;
};

TcpRelay::TcpRelay(std::uint16_t target_port) : impl_(std::make_shared<Impl>(target_port)) {}
TcpRelay::~TcpRelay() = default;
std::uint16_t TcpRelay::port() const { return impl_->port(); }
void TcpRelay::Hold() { impl_->Hold(); }
void TcpRelay::Release() { impl_->Release(); }
void TcpRelay::CloseAll() { impl_->CloseAll(); }
int TcpRelay::connections_accepted() const { return impl_->accepted.load(); }
int TcpRelay::open_connections() const { return impl_->open.load(); }
int TcpRelay::connections_holding() const { return impl_->holding.load(); }
int TcpRelay::answers_lost() const { return impl_->lost.load(); }
void TcpRelay::LoseAnswers() { impl_->LoseAnswers(); }

}  // namespace fencegate::integration
