#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace fencegate::integration {

// One throwaway radosgw (tests/support/radosgw.sh) for a whole test binary: started before the
// first test, stopped after the last (it takes ~15 s to start). Plain HTTP on `port`, HTTPS on
// `ssl_port` (certificate for localhost and 127.0.0.1 signed by `certs`/ca.pem); its S3 user is
// "fencegate" (access key fencegate-test, secret fencegate-test-secret).
class RadosgwEnvironment : public ::testing::Environment {
 public:
  static inline std::uint16_t port = 0;
  static inline std::uint16_t ssl_port = 0;
  static inline std::string certs;
  static inline std::string ceph_dir;  // the cluster's directory (ceph.conf, run/)

  void SetUp() override {
    dir_ = std::make_unique<TempDir>();
    ceph_dir = dir_->Join("ceph");
    const std::string command = "bash " + Script() + " start " + ceph_dir + " 2>&1";
    std::string output;
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char line[512];
      while (fgets(line, sizeof line, pipe) != nullptr) output += line;
      pclose(pipe);
    }
    std::smatch match;
    if (std::regex_search(
            output, match,
            std::regex("radosgw ready port=([0-9]+) .* ssl_port=([0-9]+) certs=(\\S+)"))) {
      port = static_cast<std::uint16_t>(std::stoi(match[1]));
      ssl_port = static_cast<std::uint16_t>(std::stoi(match[2]));
      certs = match[3];
    }
    ASSERT_NE(port, 0) << "radosgw did not start:\n" << output;
  }

  void TearDown() override {
    const std::string command = "bash " + Script() + " stop " + ceph_dir;
    EXPECT_EQ(std::system(command.c_str()), 0);
    dir_.reset();
  }

  // Another S3 user of the same radosgw ("someone else" for the tests). True when created.
  static bool AddUser(const std::string& uid, const std::string& access_key,
                      const std::string& secret_key) {
    const std::string command = "radosgw-admin --conf " + ceph_dir + "/ceph.conf -n client.rgw.a" +
                                " --admin-socket " + ceph_dir + "/run/radosgw-admin-" + uid +
                                ".asok user create --uid=" + uid + " --display-name=" + uid +
                                " --access-key=" + access_key + " --secret=" + secret_key +
                                " >/dev/null 2>&1";
    return std::system(command.c_str()) == 0;
  }

 private:
  static std::string Script() {
    return std::string(FENCEGATE_SOURCE_DIR) + "/tests/support/radosgw.sh";
  }
  std::unique_ptr<TempDir> dir_;
};

}  // namespace fencegate::integration
