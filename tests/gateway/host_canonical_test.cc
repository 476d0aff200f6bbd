#include "gateway/http/host_canonical.h"

#include <string>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

std::string Canonical(std::string_view value) {
  std::string out = "left over";
  EXPECT_TRUE(CanonicaliseHost(value, &out)) << value;
  return out;
}

// One host, one {host} of a fence key: case, port and the trailing dot of a FQDN do not count.
TEST(HostCanonicalTest, EverySpellingOfAHostBecomesOne) {
  for (const char* value : {"example.com", "EXAMPLE.com", "Example.Com:8080", "example.com.",
                            "EXAMPLE.COM.:443", "example.com:"}) {
    EXPECT_EQ(Canonical(value), "example.com") << value;
  }
  for (const char* value : {"[::1]", "[::1]:8080"}) {
    EXPECT_EQ(Canonical(value), "[::1]") << value;
  }
  EXPECT_EQ(Canonical("[2001:DB8::A]:80"), "[2001:db8::a]");
  EXPECT_EQ(Canonical("127.0.0.1:80"), "127.0.0.1");
  EXPECT_EQ(Canonical("a-b_c~d"), "a-b_c~d");
  EXPECT_EQ(Canonical(""), "");
}

TEST(HostCanonicalTest, RefusesWhatIsNoHost) {
  for (const char* value :
       {"exa mple.com", "example.com/x", "user@example.com", "ex%41mple.com", "a..b", "..", ".",
        ":80", "example.com:80:80", "example.com:http", "example.com:123456", "[::1", "[]",
        "[::1]x", "[::1]:8o", "[fe80::1%25eth0]", "example.com\t", "\xC3\xA9.example"}) {
    std::string out;
    EXPECT_FALSE(CanonicaliseHost(value, &out)) << value;
  }
}

}  // namespace
}  // namespace fencegate::gateway
