#include "gateway/config/config_sections.h"

#include <chrono>
#include <limits>

#include "gateway/config/command_line.h"

namespace fencegate::gateway::config_reading {

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
                             "request_timeout", "operation_timeout", "max_txn_ops", "tls"}))
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
  if (node["path"]) {
    reader.String(node["path"], Child(path, "path"), &out->path_as_written);
    out->path = reader.ResolvePath(out->path_as_written);
  }
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
                         "only for store kind 'rocksdb' (etcd batches what arrives while a "
                         "transaction is in flight, without waiting)");
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
  for (const char* key :
       {"endpoints", "prefix", "request_timeout", "operation_timeout", "max_txn_ops", "tls"}) {
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
  if (node["max_txn_ops"]) {
    reader.Count(node["max_txn_ops"], Child(path, "max_txn_ops"), 1, 1'000'000, &out->max_txn_ops);
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

}  // namespace fencegate::gateway::config_reading
