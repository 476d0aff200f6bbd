#pragma once

#include <cstdint>
#include <memory>

namespace fencegate::integration {

// A TCP relay on loopback to one server (an etcd member, a WebDAV server) that a test can hold:
// while held it accepts connections and reads what clients send but passes nothing on (a
// black-holed server: connections open, requests vanish, no answer comes); Release() passes on
// what it held and relays again. LoseAnswers() passes requests on but drops what the server
// answers (the server acts, the client never learns it did). CloseAll() closes every relayed
// connection, as a server does when it drops idle keep-alive ones. It reports what it holds and
// drops, and how many connections clients made through it, so a test waits on that state, not on
// time.
class TcpRelay {
 public:
  explicit TcpRelay(std::uint16_t target_port);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  std::uint16_t port() const;
  void Hold();
  // Ends Hold() and LoseAnswers().
  void Release();
  void LoseAnswers();
  // Closes every relayed connection; returns once they are closed.
  void CloseAll();
  // Client connections accepted since the start, open now, and how many of those have bytes held.
  int connections_accepted() const;
  int open_connections() const;
  int connections_holding() const;
  // Reads of the server's answers dropped since LoseAnswers().
  int answers_lost() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fencegate::integration
