#include "gateway/config/config_sections.h"

#include <string_view>
#include <utility>

namespace fencegate::gateway::config_reading {

namespace {

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

}  // namespace

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

void ReadTls(Reader& reader, const YAML::Node& node, tls::TlsConfig* out) {
  if (!reader.ExpectMapping(node, "tls", {"traffic", "admin"})) return;
  if (node["traffic"]) ReadServerTls(reader, node["traffic"], "tls.traffic", &out->traffic);
  if (node["admin"]) ReadServerTls(reader, node["admin"], "tls.admin", &out->admin);
}

}  // namespace fencegate::gateway::config_reading
