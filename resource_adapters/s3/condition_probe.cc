#include "resource_adapters/s3/condition_probe.h"

#include <chrono>
#include <optional>
#include <random>
#include <utility>

#include <boost/asio/use_awaitable.hpp>

#include "base/encoding/hex.h"
#include "resource_adapters/s3/s3_request.h"
#include "resource_adapters/s3/s3_upstream.h"

namespace fencegate::adapters::s3 {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

constexpr std::size_t kProbeErrorBodyLimit = 4096;

// A backend's answer to one probe request; `failure` set when there was none.
struct ProbeAnswer {
  unsigned status = 0;
  std::string etag;        // bare
  std::string error_code;  // S3's <Code> of an error answer
  std::string failure;
};

std::string ErrorCodeOf(const std::string& body) {
  const std::size_t open = body.find("<Code>");
  if (open == std::string::npos) return {};
  const std::size_t start = open + 6;
  const std::size_t close = body.find("</Code>", start);
  return close == std::string::npos ? std::string() : body.substr(start, close - start);
}

std::string AnswerText(const ProbeAnswer& answer) {
  if (!answer.failure.empty()) return "no answer (" + answer.failure + ")";
  std::string text = "answered " + std::to_string(answer.status);
  if (!answer.error_code.empty()) text += " " + answer.error_code;
  return text;
}

bool Applied(const ProbeAnswer& answer) {
  return answer.failure.empty() && answer.status / 100 == 2;
}

bool Refused(const ProbeAnswer& answer) { return answer.failure.empty() && answer.status == 412; }

// A scratch name no other probe run (of this or another gateway) uses.
std::string ScratchBase(const std::string& prefix) {
  std::random_device device;
  std::string random;
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t word = device();
    random.append(reinterpret_cast<const char*>(&word), sizeof word);
  }
  return prefix + "s3-" + encoding::HexEncode(random);
}

// One probe run's requests, all in one bucket.
class BucketProber {
 public:
  BucketProber(asio::io_context& ioc, std::shared_ptr<Backend> backend,
               std::shared_ptr<ServerConnectionPools> pools, std::string bucket)
      : ioc_(ioc),
        backend_(std::move(backend)),
        pools_(std::move(pools)),
        bucket_(std::move(bucket)),
        target_key_(ScratchBase(backend_->options.conditions.prefix) + "-target"),
        source_key_(target_key_.substr(0, target_key_.size() - 7) + "-source") {
    result_.report.scope = bucket_;
  }

  asio::awaitable<BucketProbe> Run() {
    co_await Probe();
    if (created_) {
      // Best effort: a scratch object left behind (the backend went away meanwhile) is harmless.
      co_await Send(http::verb::delete_, target_key_, kNoFields, "");
      co_await Send(http::verb::delete_, source_key_, kNoFields, "");
    }
    ConditionReport& report = result_.report;
    if (report.verdict != ConditionVerdict::kUnreachable) {
      report.verdict = ConditionReport::FromProbes(report.probes);
    }
    report.checked_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    co_return std::move(result_);
  }

 private:
  using Fields = std::vector<std::pair<std::string, std::string>>;
  const Fields kNoFields;

  asio::awaitable<void> Probe() {
    // Header lists and bodies live in locals, members or literals, never in temporaries of the
    // co_await expressions: GCC 12 miscompiles a braced list there ("array used as
    // initializer") and destroys some temporaries twice.
    ProbeAnswer answer =
        co_await Send(http::verb::put, target_key_, kNoFields, "fencegate probe 1\n");
    if (!Applied(answer)) {
      result_.bucket_missing = answer.failure.empty() && answer.status == 404;
      Unreachable("the scratch object's PUT " + AnswerText(answer));
      co_return;
    }
    created_ = true;
    std::string etag = answer.etag;

    const Fields if_none_match = OneField("If-None-Match", "*");
    answer = co_await Send(http::verb::put, target_key_, if_none_match, "fencegate probe 2\n");
    if (!Record("put-if-none-match-existing", true, answer)) co_return;
    if (Applied(answer)) etag = answer.etag;

    // A backend that refuses every If-Match would refuse every fenced write too: it must take
    // the current ETag, in the form the adapter sends (learnt here under "auto").
    const Fields current = OneField("If-Match", IfMatchEtag(*backend_, etag));
    answer = co_await Send(http::verb::put, target_key_, current, "fencegate probe 3\n");
    if (Refused(answer) && backend_->options.etag_quoting == EtagQuoting::kAuto &&
        !backend_->unquoted_etags) {
      const Fields bare = OneField("If-Match", etag);
      answer = co_await Send(http::verb::put, target_key_, bare, "fencegate probe 3\n");
      if (Applied(answer)) backend_->unquoted_etags = true;
    }
    if (!Applied(answer)) {
      Unreachable("a PUT with If-Match on the object's current ETag " + AnswerText(answer) +
                  " (fenced writes could not go through; check etag_quoting)");
      co_return;
    }
    etag = answer.etag;

    const std::string wrong = IfMatchEtag(*backend_, WrongEtag(etag));
    const Fields wrong_if_match = OneField("If-Match", wrong);
    answer = co_await Send(http::verb::put, target_key_, wrong_if_match, "fencegate probe 4\n");
    if (!Record("put-if-match-wrong-etag", true, answer)) co_return;

    answer = co_await Send(http::verb::delete_, target_key_, wrong_if_match, "");
    Record("delete-if-match-wrong-etag", false, answer);
    if (Applied(answer)) {
      // Deleted after all: the copy probe needs a destination that exists.
      answer = co_await Send(http::verb::put, target_key_, kNoFields, "fencegate probe 5\n");
      if (!Applied(answer)) {
        Unreachable("the scratch object's PUT " + AnswerText(answer));
        co_return;
      }
    }

    answer = co_await Send(http::verb::put, source_key_, kNoFields, "fencegate probe source\n");
    if (!Applied(answer)) {
      Unreachable("the copy source's PUT " + AnswerText(answer));
      co_return;
    }
    Fields copy = OneField("x-amz-copy-source", "/" + bucket_ + "/" + source_key_);
    copy.emplace_back("If-Match", wrong);
    answer = co_await Send(http::verb::put, target_key_, copy, "");
    Record("copy-destination-if-match-wrong-etag", false, answer);
  }

  static Fields OneField(std::string name, std::string value) {
    Fields fields;
    fields.emplace_back(std::move(name), std::move(value));
    return fields;
  }

  // An ETag the object does not have.
  static std::string WrongEtag(const std::string& etag) {
    std::string wrong(32, '0');
    if (etag == wrong) wrong.assign(32, '1');
    return wrong;
  }

  // Adds the probe's result: holds on 412, not on 2xx. Any other answer of a required probe
  // leaves the bucket unverified (false); an optional one is then counted as not holding, since
  // the adapter does not rely on it anyway.
  bool Record(const std::string& name, bool required, const ProbeAnswer& answer) {
    ConditionProbeResult probe;
    probe.name = name;
    probe.holds = Refused(answer);
    probe.required = required;
    if (probe.holds) {
      probe.detail = "refused with 412";
    } else if (Applied(answer)) {
      probe.detail = AnswerText(answer) + ", not 412: the condition was ignored";
    } else if (required) {
      Unreachable(name + ": " + AnswerText(answer));
      return false;
    } else {
      probe.detail = AnswerText(answer) + ", not 412";
    }
    result_.report.probes.push_back(std::move(probe));
    return true;
  }

  void Unreachable(std::string why) {
    result_.report.verdict = ConditionVerdict::kUnreachable;
    result_.report.error = std::move(why);
  }

  // `fields` must outlive the co_await (see Probe).
  asio::awaitable<ProbeAnswer> Send(http::verb method, const std::string& key, const Fields& fields,
                                    std::string_view body) {
    ProbeAnswer answer;
    S3Request parsed;
    if (auto error = ParseS3Request(method, "/" + bucket_ + "/" + key, &parsed)) {
      answer.failure = "bucket name unusable: " + *error;
      co_return answer;
    }
    RequestHeader header;
    header.method(method);
    header.target(parsed.target);
    for (const auto& [name, value] : fields) header.set(name, value);
    if (method == http::verb::put)
      header.set(http::field::content_length, std::to_string(body.size()));
    UpstreamCall call(ioc_, backend_->endpoint, pools_, bucket_);
    const error_code ec = co_await call.Send(std::move(header), body);
    if (ec) {
      answer.failure = call.problem() ? call.problem()->detail : ec.message();
      if ((call.problem() || call.connect_failed()) && !result_.connect_failure) {
        result_.connect_failure = ProbeConnectFailure{call.problem(), call.connect_failed(),
                                                      call.tls_failed(), ec, call.server_url()};
      }
      co_return answer;
    }
    answer.status = call.response().result_int();
    answer.etag = std::string(BareEtag(call.response()[http::field::etag]));
    std::string response_body;
    co_await call.ReadWholeBody(&response_body, kProbeErrorBodyLimit);
    if (answer.status / 100 != 2) answer.error_code = ErrorCodeOf(response_body);
    co_return answer;
  }

  asio::io_context& ioc_;
  std::shared_ptr<Backend> backend_;
  std::shared_ptr<ServerConnectionPools> pools_;
  const std::string bucket_;
  const std::string target_key_;
  const std::string source_key_;
  bool created_ = false;
  BucketProbe result_;
};

}  // namespace

asio::awaitable<BucketProbe> ProbeBucket(asio::io_context& ioc, std::shared_ptr<Backend> backend,
                                         std::shared_ptr<ServerConnectionPools> pools,
                                         std::string bucket) {
  BucketProber prober(ioc, std::move(backend), std::move(pools), std::move(bucket));
  co_return co_await prober.Run();
}

}  // namespace fencegate::adapters::s3
