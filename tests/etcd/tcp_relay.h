#pragma once

#include <cstdint>
#include <memory>

namespace fencegate::etcdtest {

// A TCP relay on loopback to one etcd member that a test can hold: while held it accepts
// connections and reads what clients send but passes nothing on (a black-holed member:
// connections open, requests vanish, no answer comes); Release() passes on what it held and
// relays again. It reports what it holds, so a test waits on that state, not on time.
class TcpRelay {
 public:
  explicit TcpRelay(std::uint16_t target_port);
  ~TcpRelay();
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  std::uint16_t port() const;
  void Hold();
  void Release();
  // Client connections open now, and how many of them have bytes held.
  int open_connections() const;
  int connections_holding() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fencegate::etcdtest
