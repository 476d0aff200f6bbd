#include "gateway/config/config_loader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "gateway/config/auth_config_loader.h"
#include "gateway/config/command_line.h"
#include "gateway/config/key_path.h"
#include "gateway/http/http_token.h"
#include "lockstore/status.h"

// The schema is config/examples/full-reference.yaml. Conventions of this reader:
//   - Key paths in errors are dotted, with 0-based sequence indexes: "routes[0].fence_key",
//     "backends.api.url".
//   - Durations need a unit: ms, s, m, h ("250ms", "10s", "2m", "1h").
//   - Sizes are a byte count with an optional unit: B; KiB, MiB, GiB, TiB (powers of 1024);
//     KB, MB, GB, TB (powers of 1000). "512", "16KiB", "8GiB".
//   - Counts are plain decimal integers.
//   - A filesystem root may contain "{data_dir}", replaced by the data directory.
// yaml-cpp reports problems by throwing; the exceptions are caught here, at the edge, and become
// ConfigErrors like every other problem.

namespace fencegate::gateway {

std::string ConfigError::ToString() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!key.empty()) out += key + ": ";
  out += message;
  return out;
}

namespace {

constexpr std::string_view kDataDirToken = "{data_dir}";

// Collects errors for one file.
class ErrorSink {
 public:
  ErrorSink(std::string file, std::vector<ConfigError>* errors)
      : file_(std::move(file)), errors_(errors) {}

  void Add(const YAML::Mark& mark, std::string key, std::string message) {
    // yaml-cpp marks are 0-based and -1 when unknown; ConfigError is 1-based and 0 when unknown.
    ConfigError error;
    error.file = file_;
    error.line = mark.line >= 0 ? mark.line + 1 : 0;
    error.column = mark.column >= 0 ? mark.column + 1 : 0;
    error.key = std::move(key);
    error.message = std::move(message);
    errors_->push_back(std::move(error));
  }
  void Add(const YAML::Node& node, std::string key, std::string message) {
    Add(node.Mark(), std::move(key), std::move(message));
  }

  std::size_t count() const { return errors_->size(); }

  // For the auth readers (auth_config_loader.h): problems at a node or in another file.
  AuthConfigErrors ForAuth() {
    return {[this](const YAML::Node& node, const std::string& key, const std::string& message) {
              Add(node, key, message);
            },
            [this](const std::string& file, int line, const std::string& key,
                   const std::string& message) {
              errors_->push_back({file, line, 0, key, message});
            }};
  }

 private:
  std::string file_;
  std::vector<ConfigError>* errors_;
};

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The closest known key, if it is close enough to be a plausible typo.
std::string Suggestion(std::string_view unknown, const std::vector<std::string_view>& known) {
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : known) {
    std::size_t distance = EditDistance(unknown, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best.empty() || best_distance > std::max<std::size_t>(2, best.size() / 3)) return {};
  return std::string(best);
}

// Why `file` cannot be read, or empty when it can. O_NONBLOCK: a FIFO must not hang the check.
std::string UnreadableFileProblem(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::strerror(errno);
  struct stat status {};
  const bool directory = ::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode);
  ::close(fd);
  return directory ? "it is a directory" : "";
}

bool ParseDecimal(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

// Splits "10s" into "10" and "s".
std::pair<std::string_view, std::string_view> SplitNumberAndUnit(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  return {text.substr(0, digits), text.substr(digits)};
}

struct DurationUnit {
  std::string_view name;
  std::uint64_t ticks;  // of the duration type parsed into
};

// "<decimal><unit>" into a count of ticks; false on a unit not in `units` or on overflow.
bool ParseTicks(std::string_view text, std::initializer_list<DurationUnit> units,
                std::int64_t* out) {
  auto [number, unit] = SplitNumberAndUnit(text);
  std::uint64_t value = 0;
  if (!ParseDecimal(number, &value)) return false;
  for (const DurationUnit& candidate : units) {
    if (candidate.name != unit) continue;
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (value > kMax / candidate.ticks) return false;
    *out = static_cast<std::int64_t>(value * candidate.ticks);
    return true;
  }
  return false;
}

bool ParseDuration(std::string_view text, std::chrono::milliseconds* out) {
  std::int64_t ms = 0;
  if (!ParseTicks(text, {{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 60 * 60 * 1000}}, &ms)) {
    return false;
  }
  *out = std::chrono::milliseconds(ms);
  return true;
}

// For waits shorter than a millisecond: units us, ms and s.
bool ParseMicroseconds(std::string_view text, std::chrono::microseconds* out) {
  std::int64_t us = 0;
  if (!ParseTicks(text, {{"us", 1}, {"ms", 1000}, {"s", 1000 * 1000}}, &us)) return false;
  *out = std::chrono::microseconds(us);
  return true;
}

bool ParseSize(std::string_view text, std::uint64_t* out) {
  auto [number, unit] = SplitNumberAndUnit(text);
  std::uint64_t value = 0;
  if (!ParseDecimal(number, &value)) return false;
  struct Unit {
    std::string_view name;
    std::uint64_t bytes;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"KiB", 1ull << 10},
      {"MiB", 1ull << 20},
      {"GiB", 1ull << 30},
      {"TiB", 1ull << 40},
      {"KB", 1000ull},
      {"MB", 1000ull * 1000},
      {"GB", 1000ull * 1000 * 1000},
      {"TB", 1000ull * 1000 * 1000 * 1000},
  };
  for (const Unit& candidate : kUnits) {
    if (candidate.name != unit) continue;
    if (value > std::numeric_limits<std::uint64_t>::max() / candidate.bytes) return false;
    *out = value * candidate.bytes;
    return true;
  }
  return false;
}

std::string ExpandDataDir(const std::string& text, const std::string& data_dir) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t found = text.find(kDataDirToken); found != std::string::npos;
       found = text.find(kDataDirToken, start)) {
    out.append(text, start, found - start);
    out += data_dir;
    start = found + kDataDirToken.size();
  }
  out.append(text, start);
  return out;
}

// Reads typed values out of YAML nodes, reporting every problem to the sink.
class Reader {
 public:
  explicit Reader(ErrorSink* sink) : sink_(sink) {}

  // Checks that `node` is a mapping whose keys are all in `known`, reporting unknown and
  // duplicate keys. Returns false (after reporting) if `node` is not a mapping at all.
  bool ExpectMapping(const YAML::Node& node, const std::string& path,
                     const std::vector<std::string_view>& known) {
    if (!node.IsMap()) {
      sink_->Add(node, path, "expected a mapping of keys to values");
      return false;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) {
        sink_->Add(key, path, "keys must be plain strings");
        continue;
      }
      const std::string& name = key.Scalar();
      if (!seen.insert(name).second) {
        sink_->Add(key, Child(path, name), "duplicate key");
        continue;
      }
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      std::string message = "unknown key " + Quote(name);
      std::string suggestion = Suggestion(name, known);
      if (!suggestion.empty()) message += "; did you mean " + Quote(suggestion) + "?";
      sink_->Add(key, Child(path, name), std::move(message));
    }
    return true;
  }

  // Returns the scalar text of `node`, or reports what it expected and returns false.
  bool Scalar(const YAML::Node& node, const std::string& path, std::string_view expected,
              std::string* out) {
    if (node.IsScalar()) {
      *out = node.Scalar();
      return true;
    }
    std::string got = node.IsNull() ? "nothing" : node.IsMap() ? "a mapping" : "a list";
    sink_->Add(node, path, "expected " + std::string(expected) + ", got " + got);
    return false;
  }

  void String(const YAML::Node& node, const std::string& path, std::string* out) {
    std::string text;
    if (!Scalar(node, path, "a string (write \"\" for an empty one)", &text)) return;
    if (std::any_of(text.begin(), text.end(),
                    [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); })) {
      sink_->Add(node, path, "control characters are not allowed");
      return;
    }
    *out = std::move(text);
  }

  // A file the gateway reads at start (a certificate, key or CA bundle): it must open for
  // reading now, so that --check-config finds what start would fail on. Empty: not set.
  void ReadableFile(const YAML::Node& node, const std::string& path, std::string* out) {
    const std::size_t errors_before = sink_->count();
    String(node, path, out);
    if (sink_->count() != errors_before || out->empty()) return;
    const std::string problem = UnreadableFileProblem(*out);
    if (!problem.empty()) sink_->Add(node, path, "cannot read " + Quote(*out) + ": " + problem);
  }

  void Bool(const YAML::Node& node, const std::string& path, bool* out) {
    std::string text;
    if (!Scalar(node, path, "true or false", &text)) return;
    if (text == "true" || text == "True" || text == "TRUE") {
      *out = true;
    } else if (text == "false" || text == "False" || text == "FALSE") {
      *out = false;
    } else {
      sink_->Add(node, path, "expected true or false, got " + Quote(text));
    }
  }

  // Sets *out to the value of the choice `node` names; reports the names it expected otherwise.
  // `note` (may be empty) follows the list of names in that report.
  template <typename T>
  void Choice(const YAML::Node& node, const std::string& path,
              std::initializer_list<std::pair<std::string_view, std::type_identity_t<T>>> choices,
              std::string_view note, T* out) {
    std::string expected;
    std::size_t index = 0;
    for (const auto& choice : choices) {
      if (index > 0) expected += index + 1 == choices.size() ? " or " : ", ";
      expected += Quote(choice.first);
      ++index;
    }
    if (!note.empty()) expected.append(" ").append(note);
    std::string text;
    if (!Scalar(node, path, expected, &text)) return;
    for (const auto& [name, value] : choices) {
      if (text == name) {
        *out = value;
        return;
      }
    }
    sink_->Add(node, path, "expected " + expected + "; got " + Quote(text));
  }

  template <typename T>
  void Count(const YAML::Node& node, const std::string& path, std::uint64_t min, std::uint64_t max,
             T* out) {
    std::string text;
    if (!Scalar(node, path, "a whole number", &text)) return;
    std::uint64_t value = 0;
    if (!ParseDecimal(text, &value)) {
      sink_->Add(node, path, "expected a whole number, got " + Quote(text));
    } else if (value < min || value > max) {
      sink_->Add(node, path,
                 "must be between " + std::to_string(min) + " and " + std::to_string(max));
    } else {
      *out = static_cast<T>(value);
    }
  }

  template <typename T>
  void Size(const YAML::Node& node, const std::string& path, std::uint64_t min, std::uint64_t max,
            T* out) {
    std::string text;
    if (!Scalar(node, path, "a size such as 512, 16KiB, 1MiB or 8GiB", &text)) return;
    std::uint64_t value = 0;
    if (!ParseSize(text, &value)) {
      sink_->Add(node, path,
                 "expected a size such as 512, 16KiB, 1MiB or 8GiB (units B, KiB, MiB, GiB, TiB, "
                 "KB, MB, GB, TB), got " +
                     Quote(text));
    } else if (value < min || value > max) {
      sink_->Add(
          node, path,
          "must be between " + std::to_string(min) + " and " + std::to_string(max) + " bytes");
    } else {
      *out = static_cast<T>(value);
    }
  }

  void Duration(const YAML::Node& node, const std::string& path, bool allow_zero,
                std::chrono::milliseconds* out) {
    std::string text;
    if (!Scalar(node, path, "a duration such as 250ms, 10s, 2m or 1h", &text)) return;
    std::chrono::milliseconds value{0};
    if (!ParseDuration(text, &value)) {
      sink_->Add(node, path,
                 "expected a duration such as 250ms, 10s, 2m or 1h (units ms, s, m, h), got " +
                     Quote(text));
    } else if (!allow_zero && value.count() == 0) {
      sink_->Add(node, path, "must be greater than zero");
    } else {
      *out = value;
    }
  }

  void Microseconds(const YAML::Node& node, const std::string& path, std::chrono::microseconds max,
                    std::chrono::microseconds* out) {
    std::string text;
    if (!Scalar(node, path, "a duration such as 500us or 2ms", &text)) return;
    std::chrono::microseconds value{0};
    if (!ParseMicroseconds(text, &value)) {
      sink_->Add(node, path,
                 "expected a duration such as 500us or 2ms (units us, ms, s), got " + Quote(text));
    } else if (value > max) {
      sink_->Add(node, path, "must be at most " + std::to_string(max.count()) + "us");
    } else {
      *out = value;
    }
  }

  void Listen(const YAML::Node& node, const std::string& path, ListenAddress* out) {
    std::string text;
    if (!Scalar(node, path, "HOST:PORT", &text)) return;
    std::string error;
    if (!ParseListenAddress(text, out, &error)) sink_->Add(node, path, error);
  }

  ErrorSink* sink() { return sink_; }

 private:
  ErrorSink* sink_;
};

// Parses "http://HOST[:PORT][/]" into host and port; returns an error message or "".
std::string ParseBackendUrl(std::string_view url, adapters::HttpAdapterOptions* out) {
  const std::string_view kForm = "expected http://HOST:PORT or https://HOST:PORT";
  std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(kForm) + ", got " + Quote(url);
  std::string scheme(url.substr(0, scheme_end));
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "http" && scheme != "https")
    return "unsupported scheme " + Quote(scheme) + "; " + std::string(kForm);

  std::string_view rest = url.substr(scheme_end + 3);
  std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (!tail.empty() && tail != "/") {
    return "a backend url has no path, query or fragment (the client's path is forwarded "
           "unchanged); got " +
           Quote(tail);
  }
  if (authority.find('@') != std::string_view::npos)
    return "credentials in the url are not supported";

  std::string_view host;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated '[' in the IPv6 address";
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::string(kForm) + ", got " + Quote(url);
      port_text = after.substr(1);
    }
  } else {
    std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    bool name_ok = std::all_of(host.begin(), host.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    });
    if (!name_ok) return "invalid host " + Quote(host);
  }
  if (host.empty()) return "the url has no host; " + std::string(kForm);

  out->tls = scheme == "https";
  std::uint64_t port = out->tls ? 443 : 80;
  if (!port_text.empty() || authority.back() == ':') {
    if (!ParseDecimal(port_text, &port) || port == 0 || port > 65535) {
      return "invalid port " + Quote(port_text) + " (expected 1..65535)";
    }
  }
  out->host = std::string(host);
  out->port = static_cast<std::uint16_t>(port);
  return {};
}

void ReadLimits(Reader& reader, const YAML::Node& node, Limits* out) {
  const std::string path = "limits";
  if (!reader.ExpectMapping(node, path,
                            {"max_header_bytes", "max_body_bytes", "max_connections",
                             "relay_buffer_memory", "headers_with_underscores"}))
    return;
  if (node["max_header_bytes"]) {
    reader.Size(node["max_header_bytes"], Child(path, "max_header_bytes"), 1u << 10, 1u << 20,
                &out->max_header_bytes);
  }
  if (node["max_body_bytes"]) {
    reader.Size(node["max_body_bytes"], Child(path, "max_body_bytes"), 0,
                std::numeric_limits<std::uint64_t>::max(), &out->max_body_bytes);
  }
  if (node["max_connections"]) {
    reader.Count(node["max_connections"], Child(path, "max_connections"), 1, 10'000'000,
                 &out->max_connections);
  }
  if (node["relay_buffer_memory"]) {
    reader.Size(node["relay_buffer_memory"], Child(path, "relay_buffer_memory"), 1u << 20,
                std::numeric_limits<std::uint64_t>::max(), &out->relay_buffer_memory);
  }
  if (node["headers_with_underscores"]) {
    reader.Choice(node["headers_with_underscores"], Child(path, "headers_with_underscores"),
                  {{"drop", UnderscoreAction::kDrop},
                   {"reject", UnderscoreAction::kReject},
                   {"allow", UnderscoreAction::kAllow}},
                  "", &out->headers_with_underscores);
  }
}

void ReadTimeouts(Reader& reader, const YAML::Node& node, Timeouts* out) {
  const std::string path = "timeouts";
  struct Field {
    std::string_view key;
    std::chrono::milliseconds Timeouts::*member;
    bool allow_zero;
  };
  // A zero drain means "stop at once"; every other timeout of zero would fail all requests.
  static constexpr Field kFields[] = {
      {"header_read", &Timeouts::header_read, false},
      {"body_read", &Timeouts::body_read, false},
      {"idle", &Timeouts::idle, false},
      {"response_write", &Timeouts::response_write, false},
      {"shutdown_drain", &Timeouts::shutdown_drain, true},
      {"barrier_wait", &Timeouts::barrier_wait, false},
      {"write_deadline", &Timeouts::write_deadline, false},
  };
  std::vector<std::string_view> known;
  for (const Field& field : kFields) known.push_back(field.key);
  if (!reader.ExpectMapping(node, path, known)) return;
  for (const Field& field : kFields) {
    const std::string key(field.key);
    if (node[key])
      reader.Duration(node[key], Child(path, key), field.allow_zero, &(out->*field.member));
  }
}

// A TLS client's keys (`<key_prefix>ca_file`, ...): backends and the etcd store. True when any
// is set.
bool ReadClientTls(Reader& reader, const YAML::Node& node, const std::string& path,
                   const std::string& key_prefix, tls_client::ClientTlsOptions* out) {
  using tls_client::ClientTlsOptions;
  static constexpr std::pair<const char*, std::string ClientTlsOptions::*> kFiles[] = {
      {"ca_file", &ClientTlsOptions::ca_file},
      {"server_name", &ClientTlsOptions::server_name},
      {"client_cert_file", &ClientTlsOptions::client_cert_file},
      {"client_key_file", &ClientTlsOptions::client_key_file}};
  bool any = false;
  for (const auto& [name, member] : kFiles) {
    const std::string key = key_prefix + name;
    if (!node[key]) continue;
    any = true;
    if (std::string_view(name).ends_with("_file")) {
      reader.ReadableFile(node[key], Child(path, key), &(out->*member));
    } else {
      reader.String(node[key], Child(path, key), &(out->*member));
    }
  }
  const std::string verify = key_prefix + "verify_hostname";
  if (node[verify]) {
    any = true;
    reader.Bool(node[verify], Child(path, verify), &out->verify_hostname);
  }
  if (out->client_cert_file.empty() != out->client_key_file.empty()) {
    reader.sink()->Add(
        node, Child(path, key_prefix + "client_key_file"),
        key_prefix + "client_cert_file and " + key_prefix + "client_key_file go together");
  }
  return any;
}

void ReadStoreEndpoints(Reader& reader, const YAML::Node& node, const std::string& path,
                        std::vector<std::string>* out) {
  if (!node.IsSequence() || node.size() == 0) {
    reader.sink()->Add(node, path, "expected a non-empty list of HOST:PORT");
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    std::string text;
    if (!reader.Scalar(node[i], item_path, "HOST:PORT", &text)) continue;
    ListenAddress address;
    std::string error;
    if (!ParseListenAddress(text, &address, &error) || address.port == 0) {
      reader.sink()->Add(node[i], item_path,
                         error.empty() ? "the port must not be 0" : std::move(error));
      continue;
    }
    out->push_back(std::move(text));
  }
}

void ReadStore(Reader& reader, const YAML::Node& node, StoreConfig* out) {
  const std::string path = "store";
  if (!reader.ExpectMapping(node, path,
                            {"kind", "path", "block_cache", "cached_keys", "rejection_retention",
                             "rejection_queue", "group_commit_wait", "endpoints", "prefix",
                             "request_timeout", "operation_timeout", "tls"}))
    return;
  if (node["kind"]) {
    std::string kind;
    reader.String(node["kind"], Child(path, "kind"), &kind);
    if (kind == "rocksdb" || kind == "etcd") {
      out->kind = kind;
    } else if (!kind.empty()) {
      reader.sink()->Add(
          node["kind"], Child(path, "kind"),
          "unsupported store kind " + Quote(kind) + "; expected 'rocksdb' or 'etcd'");
    }
  }
  if (node["path"]) reader.String(node["path"], Child(path, "path"), &out->path);
  if (node["block_cache"]) {
    reader.Size(node["block_cache"], Child(path, "block_cache"), 0,
                std::numeric_limits<std::size_t>::max(), &out->block_cache_bytes);
  }
  if (node["cached_keys"]) {
    reader.Count(node["cached_keys"], Child(path, "cached_keys"), 0, 1'000'000'000,
                 &out->cached_keys);
  }
  if (node["rejection_retention"]) {
    reader.Count(node["rejection_retention"], Child(path, "rejection_retention"), 0, 10'000'000,
                 &out->rejection_retention);
  }
  const bool etcd = out->kind == "etcd";
  if (node["group_commit_wait"]) {
    if (etcd) {
      reader.sink()->Add(node["group_commit_wait"], Child(path, "group_commit_wait"),
                         "only for store kind 'rocksdb' (etcd commits each advance on its own)");
    } else {
      reader.Microseconds(node["group_commit_wait"], Child(path, "group_commit_wait"),
                          std::chrono::microseconds(100'000), &out->group_commit_wait);
    }
  }
  if (node["rejection_queue"]) {
    if (etcd) {
      reader.sink()->Add(node["rejection_queue"], Child(path, "rejection_queue"),
                         "only for store kind 'rocksdb'");
    } else {
      reader.Count(node["rejection_queue"], Child(path, "rejection_queue"), 1, 10'000'000,
                   &out->rejection_queue);
    }
  }
  for (const char* key : {"endpoints", "prefix", "request_timeout", "operation_timeout", "tls"}) {
    if (node[key] && !etcd) {
      reader.sink()->Add(node[key], Child(path, key), "only for store kind 'etcd'");
    }
  }
  if (!etcd) return;
  if (node["endpoints"]) {
    ReadStoreEndpoints(reader, node["endpoints"], Child(path, "endpoints"), &out->endpoints);
  } else {
    reader.sink()->Add(node, Child(path, "endpoints"),
                       "required for store kind 'etcd': the members' HOST:PORT");
  }
  if (node["prefix"]) {
    reader.String(node["prefix"], Child(path, "prefix"), &out->prefix);
    if (node["prefix"].IsScalar() && out->prefix.empty()) {
      reader.sink()->Add(node["prefix"], Child(path, "prefix"), "must not be empty");
    }
  }
  if (node["request_timeout"]) {
    reader.Duration(node["request_timeout"], Child(path, "request_timeout"), false,
                    &out->request_timeout);
  }
  if (node["operation_timeout"]) {
    reader.Duration(node["operation_timeout"], Child(path, "operation_timeout"), false,
                    &out->operation_timeout);
  }
  // HTTPS to every member; an empty mapping trusts the system store.
  if (node["tls"]) {
    const std::string tls_path = Child(path, "tls");
    if (!reader.ExpectMapping(
            node["tls"], tls_path,
            {"ca_file", "server_name", "verify_hostname", "client_cert_file", "client_key_file"})) {
      return;
    }
    out->tls.emplace();
    ReadClientTls(reader, node["tls"], tls_path, "", &*out->tls);
  }
}

void ReadCluster(Reader& reader, const YAML::Node& node, ClusterConfig* out) {
  const std::string path = "cluster";
  out->enabled = true;
  if (!reader.ExpectMapping(node, path, {"name", "shards", "lease_ttl", "quarantine", "peers"})) {
    return;
  }
  if (node["name"]) {
    reader.String(node["name"], Child(path, "name"), &out->name);
  } else {
    reader.sink()->Add(node, Child(path, "name"), "required: this replica's name in peers");
  }
  if (node["shards"]) reader.Count(node["shards"], Child(path, "shards"), 1, 4096, &out->shards);
  if (node["lease_ttl"]) {
    reader.Duration(node["lease_ttl"], Child(path, "lease_ttl"), false, &out->lease_ttl);
    if (out->lease_ttl.count() % 1000 != 0) {
      reader.sink()->Add(node["lease_ttl"], Child(path, "lease_ttl"),
                         "must be whole seconds (etcd lease TTLs are)");
    }
  }
  if (node["quarantine"]) {
    reader.Duration(node["quarantine"], Child(path, "quarantine"), false, &out->quarantine);
  }
  const YAML::Node peers = node["peers"];
  if (!peers || !peers.IsMap() || peers.size() == 0) {
    reader.sink()->Add(peers ? peers : node, Child(path, "peers"),
                       "required: a mapping of every replica's name to its traffic HOST:PORT");
    return;
  }
  for (const auto& entry : peers) {
    const std::string name = entry.first.Scalar();
    const std::string key = Child(Child(path, "peers"), name);
    std::string text;
    if (!reader.Scalar(entry.second, key, "HOST:PORT", &text)) continue;
    ListenAddress address;
    std::string error;
    if (!ParseListenAddress(text, &address, &error) || address.port == 0) {
      reader.sink()->Add(entry.second, key, error.empty() ? "the port must not be 0" : error);
      continue;
    }
    out->peers[name] = text;
  }
  if (node["name"] && node["name"].IsScalar() && !out->peers.contains(out->name)) {
    reader.sink()->Add(node["name"], Child(path, "name"),
                       "must be one of the names under cluster.peers");
  }
}

// Writes the previous owner admitted must be over before a new owner admits (ARCHITECTURE.md
// "Several replicas"): a shorter quarantine would void the argument.
void CheckClusterQuarantine(Reader& reader, const YAML::Node& node, Config* config) {
  ClusterConfig& cluster = config->cluster;
  const auto minimum = cluster.lease_ttl + LongestUpstreamResponse(*config);
  if (cluster.quarantine.count() == 0) {
    cluster.quarantine = minimum;
  } else if (cluster.quarantine < minimum) {
    reader.sink()->Add(node["quarantine"], "cluster.quarantine",
                       "must be at least lease_ttl + the longest backend response_timeout (" +
                           std::to_string(minimum.count()) + "ms)");
  }
}

void ReadAccessLog(Reader& reader, const YAML::Node& node, AccessLogConfig* out) {
  if (!reader.ExpectMapping(node, "access_log", {"path", "error_lines_per_second"})) return;
  if (node["path"]) reader.String(node["path"], "access_log.path", &out->path);
  if (node["error_lines_per_second"]) {
    reader.Count(node["error_lines_per_second"], "access_log.error_lines_per_second", 0, 1'000'000,
                 &out->error_lines_per_second);
  }
}

// One listener's TLS termination (tls.traffic / tls.admin): the files must be readable here;
// whether they hold a usable certificate and key is checked when the gateway starts.
void ReadServerTls(Reader& reader, const YAML::Node& node, const std::string& path,
                   tls::ServerTlsSettings* out) {
  if (!reader.ExpectMapping(node, path,
                            {"cert_file", "key_file", "client_ca_file", "client_auth",
                             "min_version", "ciphers", "handshake_timeout", "shutdown_timeout"}))
    return;
  out->enabled = true;
  for (const auto& [key, member] : {std::pair{"cert_file", &tls::ServerTlsSettings::cert_file},
                                    std::pair{"key_file", &tls::ServerTlsSettings::key_file}}) {
    if (!node[key]) {
      reader.sink()->Add(node, Child(path, key), "required when TLS is configured");
    } else {
      const std::size_t errors_before = reader.sink()->count();
      reader.ReadableFile(node[key], Child(path, key), &(out->*member));
      if (reader.sink()->count() == errors_before && (out->*member).empty()) {
        reader.sink()->Add(node[key], Child(path, key), "must not be empty");
      }
    }
  }
  if (node["client_ca_file"]) {
    reader.ReadableFile(node["client_ca_file"], Child(path, "client_ca_file"),
                        &out->client_ca_file);
  }
  if (node["client_auth"]) {
    reader.Choice(node["client_auth"], Child(path, "client_auth"),
                  {{"off", tls::ClientAuth::kOff},
                   {"optional", tls::ClientAuth::kOptional},
                   {"required", tls::ClientAuth::kRequired}},
                  "", &out->client_auth);
  }
  if (out->client_auth != tls::ClientAuth::kOff && out->client_ca_file.empty()) {
    reader.sink()->Add(node["client_auth"], Child(path, "client_ca_file"),
                       "required when client_auth is optional or required");
  }
  if (node["min_version"]) {
    reader.Choice(node["min_version"], Child(path, "min_version"), {{"1.2", false}, {"1.3", true}},
                  "(older versions are not offered)", &out->tls13_only);
  }
  if (node["ciphers"]) reader.String(node["ciphers"], Child(path, "ciphers"), &out->ciphers);
  if (node["handshake_timeout"]) {
    reader.Duration(node["handshake_timeout"], Child(path, "handshake_timeout"), false,
                    &out->handshake_timeout);
  }
  if (node["shutdown_timeout"]) {
    reader.Duration(node["shutdown_timeout"], Child(path, "shutdown_timeout"), false,
                    &out->shutdown_timeout);
  }
}

void ReadTls(Reader& reader, const YAML::Node& node, tls::TlsConfig* out) {
  if (!reader.ExpectMapping(node, "tls", {"traffic", "admin"})) return;
  if (node["traffic"]) ReadServerTls(reader, node["traffic"], "tls.traffic", &out->traffic);
  if (node["admin"]) ReadServerTls(reader, node["admin"], "tls.admin", &out->admin);
}

// TLS to an https backend (README "Transport (TLS)"); the keys need an https url.
void ReadBackendTls(Reader& reader, const YAML::Node& node, const std::string& path,
                    adapters::HttpAdapterOptions* out) {
  const bool any = ReadClientTls(reader, node, path, "tls_", &out->tls_options);
  if (any && !out->tls && node["url"]) {
    reader.sink()->Add(node["url"], Child(path, "url"),
                       "tls_* keys are set but the url is not https://");
  }
}

void ReadHttpBackend(Reader& reader, const YAML::Node& node, const std::string& path,
                     adapters::HttpAdapterOptions* out) {
  if (!node["url"]) {
    reader.sink()->Add(node, Child(path, "url"), "required for an http backend");
  } else {
    std::string url;
    reader.String(node["url"], Child(path, "url"), &url);
    std::string error = url.empty() ? "must not be empty" : ParseBackendUrl(url, out);
    if (!error.empty()) reader.sink()->Add(node["url"], Child(path, "url"), error);
  }
  if (node["host_header"])
    reader.String(node["host_header"], Child(path, "host_header"), &out->host_header);
  if (node["max_idle_connections"]) {
    reader.Count(node["max_idle_connections"], Child(path, "max_idle_connections"), 0, 100'000,
                 &out->max_idle_connections);
  }
  if (node["connect_timeout"]) {
    reader.Duration(node["connect_timeout"], Child(path, "connect_timeout"), false,
                    &out->connect_timeout);
  }
  if (node["response_timeout"]) {
    reader.Duration(node["response_timeout"], Child(path, "response_timeout"), false,
                    &out->response_timeout);
  }
  if (node["idle_timeout"]) {
    reader.Duration(node["idle_timeout"], Child(path, "idle_timeout"), false, &out->idle_timeout);
  }
  ReadBackendTls(reader, node, path, out);
  if (node["forward_token_header"]) {
    const std::string key = Child(path, "forward_token_header");
    std::string name;
    reader.String(node["forward_token_header"], key, &name);
    if (!name.empty() && !IsHttpToken(name)) {
      reader.sink()->Add(node["forward_token_header"], key,
                         "not a valid header field name: " + Quote(name));
    } else {
      out->forward_token_header = name;
    }
  }
}

void ReadFilesystemBackend(Reader& reader, const YAML::Node& node, const std::string& path,
                           BackendConfig* out) {
  if (!node["root"]) {
    reader.sink()->Add(node, Child(path, "root"), "required for a filesystem backend");
  } else {
    reader.String(node["root"], Child(path, "root"), &out->filesystem_root_as_written);
    if (node["root"].IsScalar() && out->filesystem_root_as_written.empty()) {
      reader.sink()->Add(node["root"], Child(path, "root"), "must not be empty");
    }
  }
  if (node["io_threads"]) {
    reader.Count(node["io_threads"], Child(path, "io_threads"), 1, 1024,
                 &out->filesystem.io_threads);
  }
  if (node["sync_writes"]) {
    reader.Bool(node["sync_writes"], Child(path, "sync_writes"), &out->filesystem.sync_writes);
  }
}

// A credential given inline (KEY), in a file (KEY_file, trailing newline dropped) or in an
// environment variable (KEY_env): exactly one of the three.
// A secret given inline (`key`), in a file (`key_file`) or in the environment (`key_env`).
void ReadSecret(Reader& reader, const YAML::Node& node, const std::string& path,
                const std::string& key, std::string_view required_for, std::string* out) {
  const std::string file_key = key + "_file";
  const std::string env_key = key + "_env";
  const int given = (node[key] ? 1 : 0) + (node[file_key] ? 1 : 0) + (node[env_key] ? 1 : 0);
  if (given != 1) {
    reader.sink()->Add(node, Child(path, key),
                       "required for " + std::string(required_for) + ": exactly one of " + key +
                           ", " + file_key + " or " + env_key);
    return;
  }
  if (node[key]) {
    reader.String(node[key], Child(path, key), out);
  } else if (node[file_key]) {
    std::string file;
    reader.String(node[file_key], Child(path, file_key), &file);
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      reader.sink()->Add(node[file_key], Child(path, file_key), "cannot read " + Quote(file));
      return;
    }
    *out = text.str();
    while (!out->empty() && (out->back() == '\n' || out->back() == '\r')) out->pop_back();
  } else {
    std::string name;
    reader.String(node[env_key], Child(path, env_key), &name);
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      reader.sink()->Add(node[env_key], Child(path, env_key),
                         "the environment variable " + Quote(name) + " is not set");
      return;
    }
    *out = value;
  }
  if (out->empty()) reader.sink()->Add(node, Child(path, key), "must not be empty");
}

void ReadS3Backend(Reader& reader, const YAML::Node& node, const std::string& path,
                   adapters::S3AdapterOptions* out) {
  if (!node["endpoint"]) {
    reader.sink()->Add(node, Child(path, "endpoint"), "required for an s3 backend");
  } else {
    std::string url;
    reader.String(node["endpoint"], Child(path, "endpoint"), &url);
    adapters::HttpAdapterOptions parsed;
    std::string error = url.empty() ? "must not be empty" : ParseBackendUrl(url, &parsed);
    if (!error.empty()) reader.sink()->Add(node["endpoint"], Child(path, "endpoint"), error);
    out->host = parsed.host;
    out->port = parsed.port;
    out->tls = parsed.tls;
  }
  // The same keys and checks as an http backend's (README "Transport (TLS)").
  if (ReadClientTls(reader, node, path, "tls_", &out->tls_options) && !out->tls &&
      node["endpoint"]) {
    reader.sink()->Add(node["endpoint"], Child(path, "endpoint"),
                       "tls_* keys are set but the endpoint is not https://");
  }
  if (node["region"]) reader.String(node["region"], Child(path, "region"), &out->region);
  ReadSecret(reader, node, path, "access_key", "an s3 backend", &out->access_key);
  ReadSecret(reader, node, path, "secret_key", "an s3 backend", &out->secret_key);
  if (node["etag_quoting"]) {
    reader.Choice(node["etag_quoting"], Child(path, "etag_quoting"),
                  {{"quoted", adapters::EtagQuoting::kQuoted},
                   {"unquoted", adapters::EtagQuoting::kUnquoted},
                   {"auto", adapters::EtagQuoting::kAuto}},
                  "", &out->etag_quoting);
  }
  if (node["max_spool_bytes"]) {
    reader.Size(node["max_spool_bytes"], Child(path, "max_spool_bytes"), 0, 1ull << 32,
                &out->max_spool_bytes);
  }
  if (node["max_retries"]) {
    std::size_t retries = out->max_retries;
    reader.Count(node["max_retries"], Child(path, "max_retries"), 0, 1000, &retries);
    out->max_retries = static_cast<unsigned>(retries);
  }
  if (node["version_cache_entries"]) {
    reader.Count(node["version_cache_entries"], Child(path, "version_cache_entries"), 0,
                 100'000'000, &out->version_cache_entries);
  }
  if (node["connect_timeout"]) {
    reader.Duration(node["connect_timeout"], Child(path, "connect_timeout"), false,
                    &out->connect_timeout);
  }
  if (node["response_timeout"]) {
    reader.Duration(node["response_timeout"], Child(path, "response_timeout"), false,
                    &out->response_timeout);
  }
  if (node["max_idle_connections"]) {
    reader.Count(node["max_idle_connections"], Child(path, "max_idle_connections"), 0, 100'000,
                 &out->max_idle_connections);
  }
  if (node["idle_timeout"]) {
    reader.Duration(node["idle_timeout"], Child(path, "idle_timeout"), false, &out->idle_timeout);
  }
}

const std::vector<std::string_view>& S3BackendKeys() {
  static const std::vector<std::string_view> keys = {"kind",
                                                     "endpoint",
                                                     "tls_ca_file",
                                                     "tls_server_name",
                                                     "tls_verify_hostname",
                                                     "tls_client_cert_file",
                                                     "tls_client_key_file",
                                                     "region",
                                                     "access_key",
                                                     "access_key_file",
                                                     "access_key_env",
                                                     "secret_key",
                                                     "secret_key_file",
                                                     "secret_key_env",
                                                     "etag_quoting",
                                                     "max_spool_bytes",
                                                     "max_retries",
                                                     "version_cache_entries",
                                                     "connect_timeout",
                                                     "response_timeout",
                                                     "max_idle_connections",
                                                     "idle_timeout"};
  return keys;
}

const std::vector<std::string_view>& HttpBackendKeys() {
  static const std::vector<std::string_view> keys = {"kind",
                                                     "url",
                                                     "tls_ca_file",
                                                     "tls_server_name",
                                                     "tls_verify_hostname",
                                                     "tls_client_cert_file",
                                                     "tls_client_key_file",
                                                     "host_header",
                                                     "max_idle_connections",
                                                     "connect_timeout",
                                                     "response_timeout",
                                                     "idle_timeout",
                                                     "forward_token_header"};
  return keys;
}

const std::vector<std::string_view>& FilesystemBackendKeys() {
  static const std::vector<std::string_view> keys = {"kind", "root", "io_threads", "sync_writes"};
  return keys;
}

const std::vector<std::string_view>& WebdavBackendKeys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> all = HttpBackendKeys();
    all.insert(all.end(), {"lock_timeout", "lock_attempts", "lock_retry_delay"});
    return all;
  }();
  return keys;
}

// A webdav backend is an http backend (the passthrough) plus the lock sequence's options.
void ReadWebdavBackend(Reader& reader, const YAML::Node& node, const std::string& path,
                       BackendConfig* out) {
  ReadHttpBackend(reader, node, path, &out->http);
  // The lock sequence's connections use the passthrough's address and TLS settings.
  adapters::WebdavAdapterOptions& webdav = out->webdav;
  webdav.host = out->http.host;
  webdav.port = out->http.port;
  webdav.tls = out->http.tls;
  webdav.tls_options = out->http.tls_options;
  webdav.host_header = out->http.host_header;
  webdav.connect_timeout = out->http.connect_timeout;
  webdav.response_timeout = out->http.response_timeout;
  webdav.max_idle_connections = out->http.max_idle_connections;
  webdav.idle_timeout = out->http.idle_timeout;
  if (node["lock_timeout"]) {
    reader.Duration(node["lock_timeout"], Child(path, "lock_timeout"), false, &webdav.lock_timeout);
  }
  if (node["lock_attempts"]) {
    reader.Count(node["lock_attempts"], Child(path, "lock_attempts"), 1, 100'000,
                 &webdav.lock_attempts);
  }
  if (node["lock_retry_delay"]) {
    reader.Duration(node["lock_retry_delay"], Child(path, "lock_retry_delay"), false,
                    &webdav.lock_retry_delay);
  }
}

void ReadBackend(Reader& reader, const YAML::Node& node, const std::string& path,
                 BackendConfig* out) {
  if (!node.IsMap()) {
    reader.sink()->Add(node, path, "expected a mapping with a 'kind'");
    return;
  }
  if (!node["kind"]) {
    reader.sink()->Add(node, Child(path, "kind"),
                       "required: 'http', 'filesystem', 'webdav' or 's3'");
    // Still catch typos in the other keys.
    std::vector<std::string_view> all = HttpBackendKeys();
    all.insert(all.end(), FilesystemBackendKeys().begin(), FilesystemBackendKeys().end());
    reader.ExpectMapping(node, path, all);
    return;
  }
  reader.String(node["kind"], Child(path, "kind"), &out->kind);
  if (out->kind == "http") {
    reader.ExpectMapping(node, path, HttpBackendKeys());
    ReadHttpBackend(reader, node, path, &out->http);
  } else if (out->kind == "filesystem") {
    reader.ExpectMapping(node, path, FilesystemBackendKeys());
    ReadFilesystemBackend(reader, node, path, out);
  } else if (out->kind == "webdav") {
    reader.ExpectMapping(node, path, WebdavBackendKeys());
    ReadWebdavBackend(reader, node, path, out);
  } else if (out->kind == "s3") {
    reader.ExpectMapping(node, path, S3BackendKeys());
    ReadS3Backend(reader, node, path, &out->s3);
  } else if (node["kind"].IsScalar()) {
    reader.sink()->Add(node["kind"], Child(path, "kind"),
                       "unknown backend kind " + Quote(out->kind) +
                           "; expected 'http', 'filesystem', 'webdav' or 's3'");
  }
}

void ReadBackends(Reader& reader, const YAML::Node& node,
                  std::map<std::string, BackendConfig>* out) {
  if (!node.IsMap()) {
    reader.sink()->Add(node, "backends", "expected a mapping of backend names to backends");
    return;
  }
  for (const auto& entry : node) {
    if (!entry.first.IsScalar() || entry.first.Scalar().empty()) {
      reader.sink()->Add(entry.first, "backends", "backend names must be non-empty strings");
      continue;
    }
    const std::string& name = entry.first.Scalar();
    const std::string path = Child("backends", name);
    if (out->count(name) != 0) {
      reader.sink()->Add(entry.first, path, "duplicate backend name");
      continue;
    }
    BackendConfig backend;
    backend.name = name;
    ReadBackend(reader, entry.second, path, &backend);
    out->emplace(name, std::move(backend));
  }
}

void ReadFencedMethods(Reader& reader, const YAML::Node& node, const std::string& path,
                       std::vector<std::string>* out) {
  if (!node.IsSequence()) {
    reader.sink()->Add(node, path, "expected a list of HTTP methods, e.g. [PUT, POST]");
    return;
  }
  std::vector<std::string> methods;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    std::string method;
    if (!reader.Scalar(node[i], item_path, "an HTTP method", &method)) continue;
    if (!IsHttpToken(method)) {
      reader.sink()->Add(node[i], item_path, "not a valid HTTP method: " + Quote(method));
    } else if (std::find(methods.begin(), methods.end(), method) != methods.end()) {
      reader.sink()->Add(node[i], item_path, "listed twice: " + Quote(method));
    } else {
      methods.push_back(std::move(method));
    }
  }
  *out = std::move(methods);
}

void ReadFieldName(Reader& reader, const YAML::Node& node, const std::string& path,
                   std::string* out) {
  reader.String(node, path, out);
  if (node.IsScalar() && !IsHttpToken(*out)) {
    reader.sink()->Add(node, path, "not a valid header field name: " + Quote(*out));
  }
}

void ReadIdempotency(Reader& reader, const YAML::Node& node, const std::string& path,
                     IdempotencyConfig* out) {
  if (!reader.ExpectMapping(node, path,
                            {"mode", "required", "methods", "header", "expire_after",
                             "max_response_bytes", "identity_header", "forward_header"})) {
    return;
  }
  if (node["mode"]) {
    reader.Choice(node["mode"], Child(path, "mode"),
                  {{"store", IdempotencyConfig::Mode::kStore},
                   {"forward", IdempotencyConfig::Mode::kForward}},
                  "", &out->mode);
  }
  if (node["required"]) reader.Bool(node["required"], Child(path, "required"), &out->required);
  if (node["methods"]) {
    ReadFencedMethods(reader, node["methods"], Child(path, "methods"), &out->methods);
  }
  if (node["header"]) ReadFieldName(reader, node["header"], Child(path, "header"), &out->header);
  if (node["expire_after"]) {
    reader.Duration(node["expire_after"], Child(path, "expire_after"), false, &out->expire_after);
  }
  if (node["max_response_bytes"]) {
    reader.Size(node["max_response_bytes"], Child(path, "max_response_bytes"), 0, 64u << 20,
                &out->max_response_bytes);
  }
  if (node["identity_header"]) {
    ReadFieldName(reader, node["identity_header"], Child(path, "identity_header"),
                  &out->identity_header);
  }
  if (node["forward_header"]) {
    ReadFieldName(reader, node["forward_header"], Child(path, "forward_header"),
                  &out->forward_header);
  }
}

// verify_tokens: { etcd: { endpoints, lock_name, timeout, tls } } (README "Tokens").
void ReadVerifyTokens(Reader& reader, const YAML::Node& node, const std::string& path,
                      TokenVerifyConfig* out) {
  if (!reader.ExpectMapping(node, path, {"etcd"})) return;
  const std::string etcd_path = Child(path, "etcd");
  if (!node["etcd"]) {
    reader.sink()->Add(node, etcd_path, "required: the lock service to ask (only etcd for now)");
    return;
  }
  const YAML::Node etcd = node["etcd"];
  if (!reader.ExpectMapping(etcd, etcd_path, {"endpoints", "lock_name", "timeout", "tls"})) return;
  if (etcd["endpoints"]) {
    ReadStoreEndpoints(reader, etcd["endpoints"], Child(etcd_path, "endpoints"), &out->endpoints);
  } else {
    reader.sink()->Add(etcd, Child(etcd_path, "endpoints"),
                       "required: the etcd members' HOST:PORT");
  }
  const std::string name_path = Child(etcd_path, "lock_name");
  std::string text;
  if (!etcd["lock_name"]) {
    reader.sink()->Add(etcd, name_path,
                       "required: the etcd lock name, a template such as \"jobs/{segment:2}\"");
  } else if (reader.Scalar(etcd["lock_name"], name_path, "a lock-name template", &text)) {
    const lockstore::Status status = lockstore::FenceKeyTemplate::Parse(text, &out->lock_name);
    if (!status.ok()) {
      reader.sink()->Add(etcd["lock_name"], name_path,
                         "invalid lock-name template " + Quote(text) + ": " + status.message());
    } else if (text.empty()) {
      reader.sink()->Add(etcd["lock_name"], name_path, "must not be empty");
    }
  }
  if (etcd["timeout"]) {
    reader.Duration(etcd["timeout"], Child(etcd_path, "timeout"), false, &out->timeout);
  }
  if (etcd["tls"]) {
    const std::string tls_path = Child(etcd_path, "tls");
    if (!reader.ExpectMapping(
            etcd["tls"], tls_path,
            {"ca_file", "server_name", "verify_hostname", "client_cert_file", "client_key_file"})) {
      return;
    }
    out->tls.emplace();
    ReadClientTls(reader, etcd["tls"], tls_path, "", &*out->tls);
  }
}

void ReadRoute(Reader& reader, const YAML::Node& node, const std::string& path, RouteConfig* out) {
  if (!reader.ExpectMapping(
          node, path,
          {"name", "prefix", "host", "backend", "fence_key", "fenced_methods", "fence_reads",
           "idempotency", "require_signed_tokens", "max_token_advance", "verify_tokens", "policy"}))
    return;
  for (std::string_view required : {"name", "prefix", "backend", "fence_key"}) {
    if (!node[std::string(required)]) reader.sink()->Add(node, Child(path, required), "required");
  }
  if (node["name"]) {
    reader.String(node["name"], Child(path, "name"), &out->name);
    if (node["name"].IsScalar() && out->name.empty()) {
      reader.sink()->Add(node["name"], Child(path, "name"), "must not be empty");
    }
  }
  if (node["prefix"]) {
    reader.String(node["prefix"], Child(path, "prefix"), &out->prefix);
    bool has_space = std::any_of(out->prefix.begin(), out->prefix.end(),
                                 [](char c) { return c == ' ' || c == '?' || c == '#'; });
    if (node["prefix"].IsScalar() &&
        (out->prefix.empty() || out->prefix.front() != '/' || has_space)) {
      reader.sink()->Add(
          node["prefix"], Child(path, "prefix"),
          "must be a path starting with '/' (no spaces, '?' or '#'), got " + Quote(out->prefix));
    }
  }
  if (node["host"]) {
    reader.String(node["host"], Child(path, "host"), &out->host);
    // Routing compares against the Host header lower-cased and without its port.
    std::transform(out->host.begin(), out->host.end(), out->host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (out->host.find_first_of(" /:") != std::string::npos) {
      reader.sink()->Add(node["host"], Child(path, "host"),
                         "must be a host name without port, got " + Quote(out->host));
    }
  }
  if (node["backend"]) reader.String(node["backend"], Child(path, "backend"), &out->backend);
  if (node["fence_key"]) {
    std::string text;
    if (reader.Scalar(node["fence_key"], Child(path, "fence_key"), "a fence-key template", &text)) {
      lockstore::Status status = lockstore::FenceKeyTemplate::Parse(text, &out->fence_key);
      if (!status.ok()) {
        reader.sink()->Add(node["fence_key"], Child(path, "fence_key"),
                           "invalid fence-key template " + Quote(text) + ": " + status.message());
      }
    }
  }
  if (node["fenced_methods"]) {
    ReadFencedMethods(reader, node["fenced_methods"], Child(path, "fenced_methods"),
                      &out->fenced_methods);
  }
  if (node["fence_reads"])
    reader.Bool(node["fence_reads"], Child(path, "fence_reads"), &out->fence_reads);
  if (node["idempotency"]) {
    ReadIdempotency(reader, node["idempotency"], Child(path, "idempotency"),
                    &out->idempotency.emplace());
  }
  if (node["require_signed_tokens"]) {
    reader.Bool(node["require_signed_tokens"], Child(path, "require_signed_tokens"),
                &out->require_signed_tokens);
  }
  if (node["max_token_advance"]) {
    reader.Count(node["max_token_advance"], Child(path, "max_token_advance"), 0,
                 lockstore::kMaxToken, &out->max_token_advance);
  }
  if (node["verify_tokens"]) {
    ReadVerifyTokens(reader, node["verify_tokens"], Child(path, "verify_tokens"),
                     &out->verify_tokens.emplace());
    // The check runs only for a token beyond the bound: without one it would never run.
    if (out->max_token_advance == 0) {
      reader.sink()->Add(node["verify_tokens"], Child(path, "verify_tokens"),
                         "needs max_token_advance (greater than 0): only a token further ahead "
                         "than that is checked live");
    }
  }
}

void ReadRoutes(Reader& reader, const YAML::Node& node,
                const std::map<std::string, BackendConfig>& backends,
                std::vector<RouteConfig>* out) {
  if (!node.IsSequence()) {
    reader.sink()->Add(node, "routes", "expected a list of routes");
    return;
  }
  if (node.size() == 0) reader.sink()->Add(node, "routes", "at least one route is required");
  std::map<std::string, int> first_line_of_name;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string path = "routes[" + std::to_string(i) + "]";
    RouteConfig route;
    std::size_t errors_before = reader.sink()->count();
    ReadRoute(reader, node[i], path, &route);
    if (!node[i].IsMap()) continue;
    if (!route.name.empty()) {
      auto [it, inserted] = first_line_of_name.emplace(route.name, node[i]["name"].Mark().line + 1);
      if (!inserted) {
        reader.sink()->Add(node[i]["name"], Child(path, "name"),
                           "route name " + Quote(route.name) + " is already used at line " +
                               std::to_string(it->second));
      }
    }
    if (!route.backend.empty() && backends.count(route.backend) == 0) {
      reader.sink()->Add(node[i]["backend"], Child(path, "backend"),
                         "no backend named " + Quote(route.backend) + " in 'backends'");
    }
    if (reader.sink()->count() == errors_before) out->push_back(std::move(route));
  }
}

void ReadLockRule(Reader& reader, const YAML::Node& node, const std::string& path,
                  lockstore::LockRule* out) {
  if (!reader.ExpectMapping(node, path, {"match", "fence_keys", "quarantine"})) return;
  if (!node["match"]) reader.sink()->Add(node, Child(path, "match"), "required");
  if (node["match"]) {
    reader.String(node["match"], Child(path, "match"), &out->pattern);
    if (node["match"].IsScalar() && !lockstore::IsValidLockPattern(out->pattern)) {
      reader.sink()->Add(node["match"], Child(path, "match"),
                         "a lock name pattern: 1 to 128 of A-Z a-z 0-9 . _ : - and '*', got " +
                             Quote(out->pattern));
    }
  }
  if (node["fence_keys"]) {
    const YAML::Node& keys = node["fence_keys"];
    const std::string keys_path = Child(path, "fence_keys");
    if (!keys.IsSequence()) {
      reader.sink()->Add(keys, keys_path, "expected a list of fence-key templates");
    } else {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::string item_path = keys_path + "[" + std::to_string(i) + "]";
        std::string key;
        reader.String(keys[i], item_path, &key);
        const lockstore::Status status = lockstore::ValidateLockFenceKeyTemplate(key);
        if (keys[i].IsScalar() && !status.ok()) {
          reader.sink()->Add(keys[i], item_path,
                             "invalid fence key " + Quote(key) + ": " + status.message());
        }
        out->fence_keys.push_back(std::move(key));
      }
    }
  }
  if (node["quarantine"]) {
    reader.Duration(node["quarantine"], Child(path, "quarantine"), true, &out->quarantine);
  }
}

// locks.signing (README "Tokens"): {key_id: ID, keys: [{id: ID, secret|secret_file|secret_env}]}
void ReadTokenSigning(Reader& reader, const YAML::Node& node, const std::string& path,
                      lockstore::TokenKeyring* out) {
  if (!reader.ExpectMapping(node, path, {"key_id", "keys"})) return;
  for (std::string_view required : {"key_id", "keys"}) {
    if (!node[std::string(required)]) reader.sink()->Add(node, Child(path, required), "required");
  }
  const YAML::Node& keys = node["keys"];
  if (keys && (!keys.IsSequence() || keys.size() == 0)) {
    reader.sink()->Add(keys, Child(path, "keys"), "expected a non-empty list of keys");
  } else if (keys) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::string item = Child(path, "keys") + "[" + std::to_string(i) + "]";
      if (!reader.ExpectMapping(keys[i], item, {"id", "secret", "secret_file", "secret_env"})) {
        continue;
      }
      lockstore::TokenKey key;
      if (!keys[i]["id"]) reader.sink()->Add(keys[i], Child(item, "id"), "required");
      if (keys[i]["id"]) {
        reader.String(keys[i]["id"], Child(item, "id"), &key.id);
        if (!lockstore::IsValidTokenKeyId(key.id)) {
          reader.sink()->Add(keys[i]["id"], Child(item, "id"),
                             "a key id is 1 to 64 of A-Z a-z 0-9 . _ -, got " + Quote(key.id));
        }
      }
      ReadSecret(reader, keys[i], item, "secret", "a signing key", &key.secret);
      if (!key.secret.empty() && key.secret.size() < lockstore::kMinTokenSecretBytes) {
        reader.sink()->Add(keys[i], Child(item, "secret"),
                           "must be at least 32 bytes (e.g. openssl rand -base64 48)");
      }
      for (const lockstore::TokenKey& other : out->keys) {
        if (!key.id.empty() && other.id == key.id) {
          reader.sink()->Add(keys[i]["id"], Child(item, "id"), "key id used twice");
        }
      }
      out->keys.push_back(std::move(key));
    }
  }
  if (node["key_id"]) {
    reader.String(node["key_id"], Child(path, "key_id"), &out->signing_key_id);
    const bool listed = std::any_of(out->keys.begin(), out->keys.end(),
                                    [&](const auto& key) { return key.id == out->signing_key_id; });
    if (!listed && !out->keys.empty()) {  // an empty list was reported already
      reader.sink()->Add(node["key_id"], Child(path, "key_id"),
                         "names no key in " + Child(path, "keys"));
    }
  }
}

void ReadLocks(Reader& reader, const YAML::Node& node, LocksConfig* out) {
  const std::string path = "locks";
  if (!reader.ExpectMapping(node, path,
                            {"enabled", "prefix", "default_ttl", "min_ttl", "max_ttl", "max_wait",
                             "max_waiters", "cached_locks", "rules", "signing", "policy"}))
    return;
  if (node["signing"])
    ReadTokenSigning(reader, node["signing"], Child(path, "signing"), &out->signing);
  if (node["enabled"]) reader.Bool(node["enabled"], Child(path, "enabled"), &out->enabled);
  if (node["prefix"]) {
    reader.String(node["prefix"], Child(path, "prefix"), &out->prefix);
    const bool bad = out->prefix.size() < 2 || out->prefix.front() != '/' ||
                     out->prefix.back() != '/' ||
                     out->prefix.find_first_of(" ?#") != std::string::npos;
    if (node["prefix"].IsScalar() && bad) {
      reader.sink()->Add(node["prefix"], Child(path, "prefix"),
                         "must start and end with '/' (no spaces, '?' or '#'), e.g. /locks/, got " +
                             Quote(out->prefix));
    }
  }
  if (node["default_ttl"])
    reader.Duration(node["default_ttl"], Child(path, "default_ttl"), false, &out->default_ttl);
  if (node["min_ttl"])
    reader.Duration(node["min_ttl"], Child(path, "min_ttl"), false, &out->min_ttl);
  if (node["max_ttl"])
    reader.Duration(node["max_ttl"], Child(path, "max_ttl"), false, &out->max_ttl);
  if (node["max_wait"])
    reader.Duration(node["max_wait"], Child(path, "max_wait"), true, &out->max_wait);
  if (node["max_waiters"]) {
    reader.Count(node["max_waiters"], Child(path, "max_waiters"), 1, 1'000'000, &out->max_waiters);
  }
  if (node["cached_locks"]) {
    reader.Count(node["cached_locks"], Child(path, "cached_locks"), 1, 1'000'000'000,
                 &out->cached_locks);
  }
  if (out->min_ttl > out->max_ttl) {
    reader.sink()->Add(node["min_ttl"] ? node["min_ttl"] : node, Child(path, "min_ttl"),
                       "must not exceed locks.max_ttl");
  }
  if (out->default_ttl < out->min_ttl || out->default_ttl > out->max_ttl) {
    reader.sink()->Add(node["default_ttl"] ? node["default_ttl"] : node, Child(path, "default_ttl"),
                       "must be between locks.min_ttl and locks.max_ttl");
  }
  if (node["rules"]) {
    const YAML::Node& rules = node["rules"];
    if (!rules.IsSequence()) {
      reader.sink()->Add(rules, Child(path, "rules"), "expected a list of lock rules");
      return;
    }
    for (std::size_t i = 0; i < rules.size(); ++i) {
      lockstore::LockRule rule;
      ReadLockRule(reader, rules[i], "locks.rules[" + std::to_string(i) + "]", &rule);
      out->rules.push_back(std::move(rule));
    }
  }
}

// `auth`, `admin` and each route's `policy` (gateway/config/auth_config_loader.h). Policies
// are matched to routes by name, after the principals they refer to are known.
void ReadAuthSections(Reader& reader, const YAML::Node& root, Config* config) {
  const AuthConfigErrors errors = reader.sink()->ForAuth();
  if (root["auth"]) {
    if (reader.ExpectMapping(root["auth"], "auth", {"principals", "api_keys_file"})) {
      ReadCredentials(root["auth"], "auth", errors, &config->auth);
    }
  }
  if (root["admin"]) ReadAdminAuth(root["admin"], errors, &config->admin);
  if (root["locks"] && root["locks"].IsMap() && root["locks"]["policy"]) {
    ReadLockPolicy(root["locks"]["policy"], "locks.policy", config->auth, errors,
                   &config->locks.policy.emplace());
  }
  const YAML::Node& routes = root["routes"];
  if (!routes || !routes.IsSequence()) return;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    if (!routes[i].IsMap() || !routes[i]["policy"] || !routes[i]["name"]) continue;
    for (RouteConfig& route : config->routes) {
      if (route.name != routes[i]["name"].Scalar()) continue;
      ReadRoutePolicy(routes[i]["policy"], "routes[" + std::to_string(i) + "].policy", config->auth,
                      errors, &route.policy.emplace());
    }
  }
}

void ReadTopLevel(Reader& reader, const YAML::Node& root, Config* config) {
  if (!root.IsDefined() || root.IsNull()) {
    reader.sink()->Add(root, "routes", "the file is empty; at least one route is required");
    return;
  }
  if (!reader.ExpectMapping(
          root, "",
          {"listen", "admin_listen", "data_dir", "threads", "limits", "timeouts", "store",
           "access_log", "backends", "routes", "locks", "tls", "auth", "admin", "cluster"}))
    return;
  if (root["listen"]) reader.Listen(root["listen"], "listen", &config->listen);
  if (root["admin_listen"])
    reader.Listen(root["admin_listen"], "admin_listen", &config->admin_listen);
  if (root["data_dir"]) {
    reader.String(root["data_dir"], "data_dir", &config->data_dir);
    if (root["data_dir"].IsScalar() && config->data_dir.empty()) {
      reader.sink()->Add(root["data_dir"], "data_dir", "must not be empty");
    }
  }
  if (root["threads"]) reader.Count(root["threads"], "threads", 0, 1024, &config->threads);
  if (root["limits"]) ReadLimits(reader, root["limits"], &config->limits);
  if (root["timeouts"]) ReadTimeouts(reader, root["timeouts"], &config->timeouts);
  if (root["store"]) ReadStore(reader, root["store"], &config->store);
  if (root["access_log"]) ReadAccessLog(reader, root["access_log"], &config->access_log);
  if (root["backends"]) ReadBackends(reader, root["backends"], &config->backends);
  if (root["locks"]) ReadLocks(reader, root["locks"], &config->locks);
  if (root["tls"]) ReadTls(reader, root["tls"], &config->tls);
  if (root["cluster"]) {
    ReadCluster(reader, root["cluster"], &config->cluster);
    if (root["cluster"].IsMap()) CheckClusterQuarantine(reader, root["cluster"], config);
    if (config->store.kind != "etcd") {
      reader.sink()->Add(root["cluster"], "cluster",
                         "several replicas share their fences through etcd: needs store kind "
                         "'etcd'");
    }
  }
  if (root["routes"]) {
    ReadRoutes(reader, root["routes"], config->backends, &config->routes);
  } else {
    reader.sink()->Add(root, "routes", "required: at least one route");
  }
  // Signed tokens come from the lock API's keyring: a route cannot require what nobody issues.
  if (root["routes"] && root["routes"].IsSequence()) {
    const YAML::Node& routes = root["routes"];
    for (std::size_t i = 0; i < routes.size(); ++i) {
      const YAML::Node flag = routes[i].IsMap() ? routes[i]["require_signed_tokens"] : YAML::Node();
      const bool issued = config->locks.enabled && !config->locks.signing.empty();
      const bool set =
          flag && flag.IsScalar() &&
          (flag.Scalar() == "true" || flag.Scalar() == "True" || flag.Scalar() == "TRUE");
      if (set && !issued) {
        reader.sink()->Add(flag, "routes[" + std::to_string(i) + "].require_signed_tokens",
                           "needs locks.signing (and locks enabled): nothing would issue signed "
                           "tokens");
      }
    }
  }
  // With etcd the locks live in etcd (lockstore/etcd/etcd_lock_service.h), which does not
  // build lock-delay: a configured quarantine would silently not apply.
  if (config->store.kind == "etcd" && config->locks.enabled && root["locks"] &&
      root["locks"]["rules"] && root["locks"]["rules"].IsSequence()) {
    const YAML::Node& rules = root["locks"]["rules"];
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const YAML::Node quarantine = rules[i].IsMap() ? rules[i]["quarantine"] : YAML::Node();
      if (quarantine) {
        reader.sink()->Add(quarantine, "locks.rules[" + std::to_string(i) + "].quarantine",
                           "lock-delay is not available with store kind 'etcd' (the lock state "
                           "lives in etcd, and the etcd lock service has no lock-delay)");
      }
    }
  }
  ReadAuthSections(reader, root, config);
  // The lock API is matched before the routes: a route under its prefix would never be reached.
  if (config->locks.enabled && root["routes"] && root["routes"].IsSequence()) {
    const YAML::Node& routes = root["routes"];
    for (std::size_t i = 0; i < routes.size(); ++i) {
      const YAML::Node prefix = routes[i].IsMap() ? routes[i]["prefix"] : YAML::Node();
      if (prefix && prefix.IsScalar() && prefix.Scalar().starts_with(config->locks.prefix)) {
        reader.sink()->Add(prefix, "routes[" + std::to_string(i) + "].prefix",
                           "lies under locks.prefix " + Quote(config->locks.prefix) +
                               ", which the lock API answers; move the route or the lock prefix");
      }
    }
  }
}

}  // namespace

std::chrono::milliseconds LongestUpstreamResponse(const Config& config) {
  std::chrono::milliseconds longest{0};
  for (const auto& [name, backend] : config.backends) {
    if (backend.kind == "http") longest = std::max(longest, backend.http.response_timeout);
    if (backend.kind == "webdav") {
      longest = std::max({longest, backend.http.response_timeout, backend.webdav.response_timeout});
    }
    if (backend.kind == "s3") longest = std::max(longest, backend.s3.response_timeout);
  }
  return longest;
}

std::vector<ConfigError> LoadConfigText(const std::string& text, const std::string& file,
                                        Config* config) {
  std::vector<ConfigError> errors;
  ErrorSink sink(file, &errors);
  Config loaded;
  loaded.source_path = file;
  try {
    YAML::Node root = YAML::Load(text);
    Reader reader(&sink);
    ReadTopLevel(reader, root, &loaded);
    ExpandDataDirInPaths(&loaded);
  } catch (const YAML::Exception& e) {
    sink.Add(e.mark, "", e.msg);
  }
  if (errors.empty()) {
    *config = std::move(loaded);
  } else {
    // Sections are validated in schema order; the operator reads the file top to bottom.
    std::stable_sort(errors.begin(), errors.end(), [](const ConfigError& a, const ConfigError& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
  }
  return errors;
}

std::vector<ConfigError> LoadConfigFile(const std::string& path, Config* config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigError error;
    error.file = path;
    error.message = "cannot open the file";
    return {error};
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    ConfigError error;
    error.file = path;
    error.message = "cannot read the file";
    return {error};
  }
  return LoadConfigText(text.str(), path, config);
}

void ExpandDataDirInPaths(Config* config) {
  for (auto& [name, backend] : config->backends) {
    if (backend.kind == "filesystem") {
      backend.filesystem.root = ExpandDataDir(backend.filesystem_root_as_written, config->data_dir);
    }
  }
}

}  // namespace fencegate::gateway
