// The bucket-policy recipe of docs/S3_BUCKET_POLICY.md on a real Ceph radosgw: only the gateway's
// credentials may write, so nothing writes around the gateway; and what radosgw 16.2 does with
// the AWS recipe's s3:if-match / s3:if-none-match condition keys. "Someone else" is a second
// radosgw user with a FULL_CONTROL grant on the bucket. The policies are the files under
// config/examples/ the document points to, applied with awscli's put-bucket-policy.
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/s3/radosgw_environment.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

struct S3User {
  std::string access_key;
  std::string secret_key;
};
const S3User kGatewayUser{"fencegate-test", "fencegate-test-secret"};  // uid "fencegate"
const S3User kSomeoneElse{"someone-else-key", "someone-else-secret"};  // uid "someone-else"
constexpr const char* kGatewayPrincipal = "arn:aws:iam:::user/fencegate";

std::string Endpoint() { return "http://127.0.0.1:" + std::to_string(RadosgwEnvironment::port); }

// Runs `argv` and returns its exit status (-1 if it did not run or finish), its stdout in `out`.
int RunCommand(std::vector<std::string> argv, std::string* out = nullptr) {
  std::string error;
  std::unique_ptr<Process> process = Process::Start(argv, &error);
  if (!process) {
    ADD_FAILURE() << argv[0] << ": " << error;
    return -1;
  }
  const std::optional<int> status = process->Wait(std::chrono::seconds(60));
  process->WaitForOutputEnd(std::chrono::seconds(5));
  if (out != nullptr) {
    out->clear();
    for (const std::string& line : process->StdoutLines()) *out += line;
  }
  if (status != 0) std::printf("%s: %s\n", argv[0].c_str(), process->Stderr().c_str());
  return status.value_or(-1);
}

// One request to radosgw signed as `user` (curl's SigV4); returns the HTTP status.
int Signed(const S3User& user, const std::string& method, const std::string& path,
           std::vector<std::string> headers = {}, const std::string& body = "") {
  std::vector<std::string> argv = {"/usr/bin/curl",
                                   "-s",
                                   "-o",
                                   "/dev/null",
                                   "-w",
                                   "%{http_code}",
                                   "--aws-sigv4",
                                   "aws:amz:us-east-1:s3",
                                   "--user",
                                   user.access_key + ":" + user.secret_key,
                                   "-H",
                                   "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                                   "-X",
                                   method};
  for (const std::string& header : headers) {
    argv.push_back("-H");
    argv.push_back(header);
  }
  if (!body.empty()) {
    argv.push_back("--data-binary");
    argv.push_back(body);
  }
  argv.push_back(Endpoint() + path);
  std::string status;
  if (RunCommand(argv, &status) != 0) return -1;
  return std::atoi(status.c_str());
}

class BucketPolicyTest : public ::testing::Test {
 protected:
  // awscli against radosgw as `user`; returns its exit status.
  int Aws(const S3User& user, std::vector<std::string> args, std::string* out = nullptr) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "AWS_ACCESS_KEY_ID=" + user.access_key,
                                     "AWS_SECRET_ACCESS_KEY=" + user.secret_key,
                                     "AWS_DEFAULT_REGION=us-east-1",
                                     "AWS_CONFIG_FILE=" + dir_.Join("none"),
                                     "AWS_SHARED_CREDENTIALS_FILE=" + dir_.Join("none"),
                                     "AWS_EC2_METADATA_DISABLED=true",
                                     "AWS_PAGER=",
                                     "HOME=" + dir_.path(),
                                     "/usr/bin/aws",
                                     "--endpoint-url",
                                     Endpoint()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, out);
  }

  // A bucket of the gateway's user on which someone else has FULL_CONTROL (without the policy,
  // nothing stops them writing around the gateway, or changing the bucket's ACL and policy).
  void CreateSharedBucket(const std::string& bucket) {
    ASSERT_EQ(Signed(kGatewayUser, "PUT", "/" + bucket), 200);
    ASSERT_EQ(Aws(kGatewayUser, {"s3api", "put-bucket-acl", "--bucket", bucket,
                                 "--grant-full-control", "id=someone-else,id=fencegate"}),
              0);
  }

  // config/examples/s3-bucket-policy-<form>.json for `bucket`, applied by the bucket's owner.
  int ApplyPolicy(const std::string& form, const std::string& bucket) {
    std::ifstream in(std::string(FENCEGATE_SOURCE_DIR) + "/config/examples/s3-bucket-policy-" +
                     form + ".json");
    std::stringstream text;
    text << in.rdbuf();
    std::string policy = text.str();
    EXPECT_FALSE(policy.empty()) << form;
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{"GATEWAY_PRINCIPAL", kGatewayPrincipal},
          {"BUCKET", bucket}}) {
      for (std::size_t at = policy.find(from); at != std::string::npos;
           at = policy.find(from, at + to.size())) {
        policy.replace(at, from.size(), to);
      }
    }
    const std::string file = dir_.WriteFile(form + "-" + bucket + ".json", policy);
    return Aws(kGatewayUser,
               {"s3api", "put-bucket-policy", "--bucket", bucket, "--policy", "file://" + file});
  }

  // A fencegate in front of the radosgw with the gateway's credentials; every bucket fenced.
  std::unique_ptr<GatewayInstance> StartGateway() {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    YAML::Node rgw = config.Backend("rgw");
    rgw["kind"] = "s3";
    rgw["endpoint"] = Endpoint();
    rgw["access_key"] = kGatewayUser.access_key;
    rgw["secret_key_file"] = dir_.WriteFile("secret", kGatewayUser.secret_key + "\n");
    rgw["etag_quoting"] = "auto";
    config.Route("s3", "/", "rgw", "s3:{path}");
    std::string error;
    auto gateway = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config.Yaml()),
                                          dir_.Join("data"), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  static Response Through(const GatewayInstance& gateway, http::verb method,
                          const std::string& target, std::optional<std::uint64_t> token,
                          std::string body = {}) {
    Request request = MakeRequest(method, target, {}, std::move(body));
    if (token) request.set("Fencing-Token", std::to_string(*token));
    std::string error;
    std::optional<Response> response = Fetch(gateway.traffic_port(), std::move(request), &error);
    EXPECT_TRUE(response.has_value()) << error;
    return response.value_or(Response{});
  }

  TempDir dir_;
};

TEST_F(BucketPolicyTest, OnlyTheGatewaysCredentialsWrite) {
  ASSERT_TRUE(RadosgwEnvironment::AddUser("someone-else", kSomeoneElse.access_key,
                                          kSomeoneElse.secret_key));
  CreateSharedBucket("recipe");
  // Without the policy someone else writes around the gateway: no token, no fence.
  EXPECT_EQ(Signed(kSomeoneElse, "PUT", "/recipe/around", {}, "unfenced"), 200);

  ASSERT_EQ(ApplyPolicy("radosgw", "recipe"), 0);
  EXPECT_EQ(Signed(kSomeoneElse, "PUT", "/recipe/plain", {}, "x"), 403);
  EXPECT_EQ(Signed(kSomeoneElse, "PUT", "/recipe/conditional", {"If-None-Match: *"}, "x"), 403);
  EXPECT_EQ(Signed(kSomeoneElse, "PUT", "/recipe/copied", {"x-amz-copy-source: /recipe/around"}),
            403);
  EXPECT_EQ(Signed(kSomeoneElse, "POST", "/recipe/multipart?uploads"), 403);
  EXPECT_EQ(Signed(kSomeoneElse, "DELETE", "/recipe/around"), 403);
  std::string out;
  Aws(kSomeoneElse,
      {"s3api", "delete-objects", "--bucket", "recipe", "--delete",
       "{\"Objects\":[{\"Key\":\"around\"}]}"},
      &out);
  // (The object is someone else's: only they may read it.)
  EXPECT_EQ(Signed(kSomeoneElse, "GET", "/recipe/around"), 200) << "deleted by " << out;
  // Nor can someone else lift the policy or widen the ACL.
  EXPECT_EQ(Signed(kSomeoneElse, "DELETE", "/recipe?policy"), 403);
  EXPECT_EQ(Signed(kSomeoneElse, "PUT", "/recipe?acl", {"x-amz-acl: public-read-write"}), 403);
  // Reads are not the policy's business.
  EXPECT_EQ(Signed(kSomeoneElse, "GET", "/recipe/around"), 200);

  // The gateway's fenced writes, reads and tombstone deletes go through.
  auto gateway = StartGateway();
  ASSERT_NE(gateway, nullptr);
  const Response written = Through(*gateway, http::verb::put, "/recipe/doc", 3, "v3");
  EXPECT_EQ(written.result_int(), 200) << written.body();
  const Response read = Through(*gateway, http::verb::get, "/recipe/doc", std::nullopt);
  EXPECT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body(), "v3");
  EXPECT_EQ(Through(*gateway, http::verb::put, "/recipe/doc", 2, "v2").result_int(), 409);
  const Response deleted = Through(*gateway, http::verb::delete_, "/recipe/doc", 4);
  EXPECT_LT(deleted.result_int(), 300) << deleted.body();
}

// radosgw 16.2 accepts the AWS recipe but knows neither s3:ObjectCreationOperation nor the
// s3:if-match / s3:if-none-match keys. In the recipe's second statement the Bool condition on
// s3:ObjectCreationOperation never holds, so the statement never applies: unconditional writes
// with the gateway's credentials still land. Without that Bool condition, the Null condition
// on the unknown keys holds for every request, header or not, and denies every PutObject.
TEST_F(BucketPolicyTest, RadosgwCannotRequireAConditionHeader) {
  ASSERT_EQ(Signed(kGatewayUser, "PUT", "/conditions"), 200);
  ASSERT_EQ(ApplyPolicy("aws", "conditions"), 0);
  EXPECT_EQ(Signed(kGatewayUser, "PUT", "/conditions/plain", {}, "x"), 200);
  EXPECT_EQ(Signed(kGatewayUser, "PUT", "/conditions/created", {"If-None-Match: *"}, "x"), 200);
  auto gateway = StartGateway();
  ASSERT_NE(gateway, nullptr);
  const Response fenced = Through(*gateway, http::verb::put, "/conditions/doc", 1, "v1");
  EXPECT_EQ(fenced.result_int(), 200) << fenced.body();

  const std::string null_only = dir_.WriteFile(
      "null-only.json",
      R"({"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*",)"
      R"("Action":"s3:PutObject","Resource":"arn:aws:s3:::conditions/*","Condition":)"
      R"({"Null":{"s3:if-match":"true","s3:if-none-match":"true"}}}]})");
  ASSERT_EQ(Aws(kGatewayUser, {"s3api", "put-bucket-policy", "--bucket", "conditions", "--policy",
                               "file://" + null_only}),
            0);
  EXPECT_EQ(Signed(kGatewayUser, "PUT", "/conditions/plain2", {}, "x"), 403);
  EXPECT_EQ(Signed(kGatewayUser, "PUT", "/conditions/created2", {"If-None-Match: *"}, "x"), 403);
  EXPECT_GE(Through(*gateway, http::verb::put, "/conditions/doc", 2, "v2").result_int(), 400);
  // Reads still pass.
  const Response read = Through(*gateway, http::verb::get, "/conditions/doc", std::nullopt);
  EXPECT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body(), "v1");
}

}  // namespace
}  // namespace fencegate::integration

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new fencegate::integration::RadosgwEnvironment);
  return RUN_ALL_TESTS();
}
