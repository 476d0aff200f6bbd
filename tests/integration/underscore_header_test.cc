// README "Header names with underscores": backends behind CGI, WSGI or PHP read `Transfer_Encoding`
// as Transfer-Encoding. Such a lookalike of a framing, hop-by-hop or gateway field is refused in
// every mode of limits.headers_with_underscores; other underscore names are dropped (default),
// refused or forwarded. What reached the backend is read from a recording backend.

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

const std::string kProblemType = "https://fencegate.dev/problems/underscore-in-header-name";

// The scanner's request: chunked for a backend that maps '_' to '-', Content-Length for the
// gateway, and a second request hidden in what the backend would read as the next message.
const std::string kSmuggledGet = "GET /kv/hidden HTTP/1.1\r\nHost: x\r\n\r\n";
std::string WithField(const std::string& field) {
  return "PUT /kv/a HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\n" + field +
         "\r\nContent-Length: " + std::to_string(5 + kSmuggledGet.size()) + "\r\n\r\n0\r\n\r\n" +
         kSmuggledGet;
}

// Every lookalike a mode must refuse, spelled as scanners and clients spell them.
const std::vector<std::string> kLookalikes = {
    WithField("Transfer_Encoding: chunked"),
    WithField("transfer_encoding: chunked"),
    WithField("Content_Length: 0"),
    WithField("Keep_Alive: timeout=5"),
    WithField("X_Forwarded_For: 10.0.0.1"),
    WithField("Fencing_Token: 99"),
    WithField("Fencing-Token_Signature: kid=k;exp=1;scope=s;mac=m"),
};

class UnderscoreHeaderTest : public HttpGatewayTest {
 protected:
  // Sends `raw` on its own connection; expects a 400 underscore problem and the connection
  // closed after it.
  void ExpectRefused(const std::string& raw) {
    HttpConnection connection(std::chrono::seconds(10));
    ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
    ASSERT_TRUE(connection.WriteRaw(raw)) << connection.error();
    std::optional<Response> response = connection.ReadResponse();
    ASSERT_TRUE(response) << connection.error() << "\n" << raw;
    EXPECT_EQ(response->result_int(), 400) << raw;
    EXPECT_EQ((*response)[http::field::content_type], "application/problem+json") << raw;
    EXPECT_EQ(boost::json::parse(response->body()).at("type").as_string(), kProblemType) << raw;
    EXPECT_FALSE(response->keep_alive()) << raw;
  }

  // A PUT carrying `fields` that reaches the backend; returns what the backend saw.
  RecordedRequest Forwarded(const std::vector<std::pair<std::string, std::string>>& fields) {
    Request request = MakeRequest(http::verb::put, "/kv/b", {}, "body");
    request.set("Fencing-Token", "1");
    for (const auto& [name, value] : fields) request.insert(name, value);
    const std::size_t before = backend_.Requests().size();
    EXPECT_EQ(Send(std::move(request)).result_int(), 200);
    EXPECT_TRUE(backend_.WaitForCompleted(before + 1, std::chrono::seconds(10)));
    const std::vector<RecordedRequest> seen = backend_.Requests();
    return seen.empty() ? RecordedRequest{} : seen.back();
  }

  double Counted(const std::string& action) {
    return MetricValue(FetchMetricsText(gateway_->admin_port()),
                       "fencegate_underscore_header_fields_total", "action=\"" + action + "\"")
        .value_or(-1);
  }

  void ExpectLookalikesRefusedAndNeverForwarded() {
    for (const std::string& raw : kLookalikes) ExpectRefused(raw);
    EXPECT_TRUE(backend_.Requests().empty());
    EXPECT_EQ(Counted("refused"), static_cast<double>(kLookalikes.size()));
  }
};

// The default is drop.
using UnderscoreDropTest = UnderscoreHeaderTest;

TEST_F(UnderscoreDropTest, LookalikesAreRefusedOtherUnderscoreFieldsDropped) {
  ExpectLookalikesRefusedAndNeverForwarded();
  const RecordedRequest seen =
      Forwarded({{"X_Api_Version", "2"}, {"X-Api-Version", "3"}, {"Trace_Id", "t"}});
  EXPECT_EQ(seen.headers["X-Api-Version"], "3") << seen;
  EXPECT_EQ(seen.headers.count("X_Api_Version"), 0u) << seen;
  EXPECT_EQ(seen.headers.count("Trace_Id"), 0u) << seen;
  EXPECT_EQ(Counted("dropped"), 2.0);
  ASSERT_EQ(backend_.Requests().size(), 1u);  // the hidden GET never reached it
}

class UnderscoreRejectTest : public UnderscoreHeaderTest {
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["limits"]["headers_with_underscores"] = "reject";
  }
};

TEST_F(UnderscoreRejectTest, EveryUnderscoreFieldIsRefused) {
  ExpectLookalikesRefusedAndNeverForwarded();
  ExpectRefused(
      "PUT /kv/a HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\nX_Api_Version: 2\r\n"
      "Content-Length: 0\r\n\r\n");
  EXPECT_TRUE(backend_.Requests().empty());
  EXPECT_EQ(Counted("refused"), static_cast<double>(kLookalikes.size() + 1));
  EXPECT_EQ(Forwarded({{"X-Api-Version", "3"}}).headers["X-Api-Version"], "3");
}

class UnderscoreAllowTest : public UnderscoreHeaderTest {
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["limits"]["headers_with_underscores"] = "allow";
  }
};

TEST_F(UnderscoreAllowTest, OtherUnderscoreFieldsPassLookalikesStillRefused) {
  ExpectLookalikesRefusedAndNeverForwarded();
  const RecordedRequest seen = Forwarded({{"X_Api_Version", "2"}});
  EXPECT_EQ(seen.headers["X_Api_Version"], "2") << seen;
  EXPECT_EQ(Counted("dropped"), 0.0);
  ASSERT_EQ(backend_.Requests().size(), 1u);
}

}  // namespace
}  // namespace fencegate::integration
