#include "gateway/config/config_sections.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace fencegate::gateway::config_reading {

namespace {

// The connection keys every networked kind shares (adapters::UpstreamOptions): the servers'
// addresses (`url_key`: url or endpoint, or `servers`) and their balancing, TLS to it (README
// "Transport (TLS)"; the tls_* keys need an https address), the timeouts and the keep-alive pool.
void ReadUpstream(Reader& reader, const YAML::Node& node, const std::string& path,
                  const std::string& url_key, std::string_view required_for,
                  adapters::UpstreamOptions* out) {
  ReadBackendServers(reader, node, path, url_key, required_for, out);
  if (ReadClientTls(reader, node, path, "tls_", &out->tls_options) && !out->tls &&
      !out->balancing.servers.empty()) {
    const std::string key = node[url_key] ? url_key : "servers";
    reader.sink()->Add(node[key], Child(path, key),
                       "tls_* keys are set but the " + key + " " + (node[url_key] ? "is" : "are") +
                           " not https://");
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

void ReadHttpBackend(Reader& reader, const YAML::Node& node, const std::string& path,
                     adapters::HttpAdapterOptions* out) {
  ReadUpstream(reader, node, path, "url", "an http backend", out);
  if (node["host_header"])
    reader.String(node["host_header"], Child(path, "host_header"), &out->host_header);
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
    reader.String(node["root"], Child(path, "root"), &out->data_dir_path_as_written);
    if (node["root"].IsScalar() && out->data_dir_path_as_written.empty()) {
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

// Whether fenced writes may rely on the server's conditions before they are checked
// (docs/BACKEND_TRUST.md): the probe keys of the s3 and webdav kinds. `buckets` only for s3.
void ReadConditionProbes(Reader& reader, const YAML::Node& node, const std::string& path,
                         bool buckets, adapters::ConditionProbeOptions* out) {
  if (node["conditions"]) {
    reader.Choice(node["conditions"], Child(path, "conditions"),
                  {{"verify", adapters::ConditionProbeOptions::Policy::kVerify},
                   {"trust", adapters::ConditionProbeOptions::Policy::kTrust}},
                  "", &out->policy);
  }
  if (node["probe_prefix"]) {
    const std::string key = Child(path, "probe_prefix");
    std::string prefix;
    reader.String(node["probe_prefix"], key, &prefix);
    if (node["probe_prefix"].IsScalar() && (prefix.empty() || prefix.front() == '/')) {
      reader.sink()->Add(node["probe_prefix"], key,
                         "must be a non-empty path relative to the backend's root (no leading /)");
    } else {
      out->prefix = prefix;
    }
  }
  if (node["probe_interval"]) {
    reader.Duration(node["probe_interval"], Child(path, "probe_interval"), false, &out->interval);
  }
  if (buckets && node["probe_buckets"]) {
    const std::string key = Child(path, "probe_buckets");
    const YAML::Node& list = node["probe_buckets"];
    if (!list.IsSequence()) {
      reader.sink()->Add(list, key, "expected a list of bucket names");
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string item_key = key + "[" + std::to_string(i) + "]";
      std::string bucket;
      reader.String(list[i], item_key, &bucket);
      // S3's bucket naming rules, so a typo is caught here rather than by a failed probe.
      const bool valid =
          bucket.size() >= 3 && bucket.size() <= 63 &&
          std::all_of(bucket.begin(), bucket.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
          });
      if (!list[i].IsScalar()) continue;
      if (!valid) {
        reader.sink()->Add(list[i], item_key,
                           "not an S3 bucket name (3-63 of a-z, 0-9, '.', '-'): " + Quote(bucket));
      } else {
        out->buckets.push_back(bucket);
      }
    }
  }
}

void ReadS3Backend(Reader& reader, const YAML::Node& node, const std::string& path,
                   adapters::S3AdapterOptions* out) {
  ReadUpstream(reader, node, path, "endpoint", "an s3 backend", out);
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
  ReadConditionProbes(reader, node, path, true, &out->conditions);
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
                                                     "idle_timeout",
                                                     "servers",
                                                     "policy",
                                                     "health_check",
                                                     "outlier",
                                                     "limits",
                                                     "resolve_interval",
                                                     "conditions",
                                                     "probe_prefix",
                                                     "probe_interval",
                                                     "probe_buckets"};
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
                                                     "forward_token_header",
                                                     "servers",
                                                     "policy",
                                                     "health_check",
                                                     "outlier",
                                                     "limits",
                                                     "resolve_interval"};
  return keys;
}

const std::vector<std::string_view>& FilesystemBackendKeys() {
  static const std::vector<std::string_view> keys = {"kind", "root", "io_threads", "sync_writes"};
  return keys;
}

const std::vector<std::string_view>& WebdavBackendKeys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> all = HttpBackendKeys();
    all.insert(all.end(), {"lock_timeout", "lock_attempts", "lock_retry_delay", "conditions",
                           "probe_prefix", "probe_interval"});
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
  static_cast<adapters::UpstreamOptions&>(webdav) = out->http;
  webdav.host_header = out->http.host_header;
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
  ReadConditionProbes(reader, node, path, false, &webdav.conditions);
}

// How each backend kind (resource_adapters/registry/registry.h) is written: its keys and its
// reader, one row per kind, in the order of adapters::BackendKind.
struct BackendReader {
  adapters::BackendKind kind;
  const std::vector<std::string_view>& (*keys)();
  void (*read)(Reader& reader, const YAML::Node& node, const std::string& path, BackendConfig* out);
};

constexpr BackendReader kBackendReaders[] = {
    {adapters::BackendKind::kHttp, HttpBackendKeys,
     [](Reader& reader, const YAML::Node& node, const std::string& path, BackendConfig* out) {
       ReadHttpBackend(reader, node, path, &out->http);
     }},
    {adapters::BackendKind::kFilesystem, FilesystemBackendKeys, ReadFilesystemBackend},
    {adapters::BackendKind::kWebdav, WebdavBackendKeys, ReadWebdavBackend},
    {adapters::BackendKind::kS3, S3BackendKeys,
     [](Reader& reader, const YAML::Node& node, const std::string& path, BackendConfig* out) {
       ReadS3Backend(reader, node, path, &out->s3);
     }},
};

static_assert(std::size(kBackendReaders) == adapters::kBackendKindCount,
              "a reader for every backend kind");
static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kBackendReaders); ++i) {
        if (kBackendReaders[i].kind != static_cast<adapters::BackendKind>(i)) return false;
      }
      return true;
    }(),
    "readers in the order of adapters::BackendKind");

void ReadBackend(Reader& reader, const YAML::Node& node, const std::string& path,
                 BackendConfig* out) {
  if (!node.IsMap()) {
    reader.sink()->Add(node, path, "expected a mapping with a 'kind'");
    return;
  }
  if (!node["kind"]) {
    reader.sink()->Add(node, Child(path, "kind"), "required: " + adapters::BackendKindNames());
    // Still catch typos in the other keys: a key that no kind has.
    std::vector<std::string_view> all;
    for (const BackendReader& kind : kBackendReaders) {
      for (std::string_view key : kind.keys()) {
        if (std::find(all.begin(), all.end(), key) == all.end()) all.push_back(key);
      }
    }
    reader.ExpectMapping(node, path, all);
    return;
  }
  reader.String(node["kind"], Child(path, "kind"), &out->kind);
  if (const adapters::BackendKindRow* row = adapters::FindBackendKind(out->kind)) {
    const BackendReader& kind = kBackendReaders[static_cast<std::size_t>(row->kind)];
    reader.ExpectMapping(node, path, kind.keys());
    kind.read(reader, node, path, out);
  } else if (node["kind"].IsScalar()) {
    reader.sink()->Add(
        node["kind"], Child(path, "kind"),
        "unknown backend kind " + Quote(out->kind) + "; expected " + adapters::BackendKindNames());
  }
}

}  // namespace

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
    // The `backend` label of its metrics and its name in /admin/backends.
    backend.http.backend_name = backend.webdav.backend_name = backend.s3.backend_name = name;
    out->emplace(name, std::move(backend));
  }
}

}  // namespace fencegate::gateway::config_reading

namespace fencegate::gateway {

std::chrono::milliseconds LongestUpstreamResponse(const Config& config) {
  std::chrono::milliseconds longest{0};
  for (const auto& [name, backend] : config.backends) {
    if (const adapters::BackendKindRow* row = adapters::FindBackendKind(backend.kind)) {
      longest = std::max(longest, row->longest_response(backend));
    }
  }
  return longest;
}

const adapters::BalancingOptions* BackendBalancing(const BackendConfig& backend) {
  const adapters::BackendKindRow* row = adapters::FindBackendKind(backend.kind);
  if (row == nullptr) return nullptr;
  switch (row->kind) {
    case adapters::BackendKind::kHttp:
    case adapters::BackendKind::kWebdav:
      return &backend.http.balancing;
    case adapters::BackendKind::kS3:
      return &backend.s3.balancing;
    case adapters::BackendKind::kFilesystem:
      return nullptr;
  }
  return nullptr;
}

void ExpandDataDirInPaths(Config* config) {
  for (auto& [name, backend] : config->backends) {
    const adapters::BackendKindRow* row = adapters::FindBackendKind(backend.kind);
    std::string* path = row != nullptr ? row->data_dir_path(backend) : nullptr;
    if (path != nullptr) {
      *path = config_reading::ResolveAgainst(
          config->config_dir,
          config_reading::ExpandDataDir(backend.data_dir_path_as_written, config->data_dir));
    }
  }
}

}  // namespace fencegate::gateway
