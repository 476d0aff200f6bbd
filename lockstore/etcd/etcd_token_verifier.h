#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/tokens/token_verifier.h"

namespace fencegate::lockstore::etcd {

struct EtcdTokenVerifierOptions {
  // Endpoints, TLS and timeouts of the lock service's etcd (not necessarily the fence store's).
  // operation_timeout bounds one check, time spent queued included.
  EtcdClientOptions client;
  std::size_t threads = 2;        // each owns one client (the client is synchronous)
  std::size_t max_pending = 256;  // checks queued beyond this are answered kUnavailable at once
};

// Checks tokens taken with etcd's lock API (etcdctl lock, /v3/lock/lock): such a lock's keys are
// "<lock name>/<lease hex>", its holder is the key with the lowest create_revision, and the token
// is that key's create_revision. A token is held when the lowest key under "<lock name>/" was
// created at exactly that revision, read linearizably (a quorum answered).
class EtcdTokenVerifier final : public TokenVerifier {
 public:
  explicit EtcdTokenVerifier(EtcdTokenVerifierOptions options);
  // Answers what is still queued with kUnavailable and joins the threads.
  ~EtcdTokenVerifier() override;
  EtcdTokenVerifier(const EtcdTokenVerifier&) = delete;
  EtcdTokenVerifier& operator=(const EtcdTokenVerifier&) = delete;

  void Verify(std::string lock_name, Token token,
              std::function<void(TokenCheck)> callback) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore::etcd
