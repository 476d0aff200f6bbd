#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tls_client.h"

namespace fencegate::etcdtest {

// HTTPS on the members' client listeners (etcd --cert-file, --key-file, and with a CA file
// --client-cert-auth --trusted-ca-file). Peers stay plain: loopback, and not what is tested.
struct EtcdTls {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // non-empty: client certificates from this CA are required
  // How the start-up health probe connects (it must pass the server's checks too).
  integration::TlsClientOptions probe;
};

// A real etcd cluster (Debian's etcd-server 3.4) of `members` on loopback: ephemeral ports,
// data under a temp dir, every member killed and the dir removed on destruction.
class EtcdCluster {
 public:
  // Returns nullptr and sets `error` when the cluster does not answer /health in time.
  static std::unique_ptr<EtcdCluster> Start(int members, std::string* error,
                                            const EtcdTls* tls = nullptr);
  ~EtcdCluster();

  // "127.0.0.1:PORT" of every member's client listener.
  std::vector<std::string> endpoints() const;
  std::uint16_t client_port(int member) const { return members_[member].client_port; }
  // kill -9 of one member (its port then refuses connections).
  void Kill(int member);

 private:
  struct Member {
    std::string name;
    std::uint16_t client_port = 0;
    std::uint16_t peer_port = 0;
    std::unique_ptr<integration::Process> process;
  };
  EtcdCluster() = default;
  static std::unique_ptr<EtcdCluster> StartOnce(int members, std::string* error,
                                                const EtcdTls* tls);

  integration::TempDir dir_;
  std::vector<Member> members_;
};

// A test suite sharing one single-member cluster: started before the suite's first test, killed
// after its last; each test keeps to keys of its own.
class OneMemberEtcdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    cluster_ = EtcdCluster::Start(1, &error);
    ASSERT_NE(cluster_, nullptr) << error;
  }
  static void TearDownTestSuite() { cluster_.reset(); }

  static inline std::unique_ptr<EtcdCluster> cluster_;
};

// A port nobody listens on right now (bound and released).
std::uint16_t FreePort();

}  // namespace fencegate::etcdtest
