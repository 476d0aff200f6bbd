#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "resource_adapters/filesystem/filesystem_adapter_options.h"
#include "resource_adapters/http/http_adapter_options.h"
#include "resource_adapters/s3/s3_adapter_options.h"
#include "resource_adapters/webdav/webdav_adapter_options.h"

// The backend kinds, one row each: what the gateway needs to know about a kind apart from how
// its configuration is written (the YAML readers, gateway/config/backend_config_loader.cc, keep
// one reader per row). The static form of a factory registration: a constant table, no
// registration at start-up. A new kind is a new row here, its options struct, and its reader.
// Plain types only (no Asio), so that the configuration headers can hold BackendOptions.

namespace fencegate::adapters {

class AdapterFactory;
class RelayBudget;

enum class BackendKind { kHttp, kFilesystem, kWebdav, kS3 };
inline constexpr std::size_t kBackendKindCount = 4;

// The options of one backend: the member(s) its kind's row uses.
struct BackendOptions {
  HttpAdapterOptions http;              // kind http; kind webdav: the passthrough's
  FilesystemAdapterOptions filesystem;  // kind filesystem
  WebdavAdapterOptions webdav;          // kind webdav: the lock sequence's
  S3AdapterOptions s3;                  // kind s3
};

struct BackendKindRow {
  BackendKind kind;
  std::string_view name;  // the configuration's `kind:`
  // The adapter factory for a backend of this kind, or null with `error` set. `budget` is the
  // relay buffer memory all request bodies share.
  std::unique_ptr<AdapterFactory> (*make_factory)(const BackendOptions& options,
                                                  std::shared_ptr<RelayBudget> budget,
                                                  std::string* error);
  // The longest a request sent to this backend can stay unanswered before the adapter gives up
  // on it; zero when nothing leaves the process (a filesystem write re-checks the token kept
  // with the file).
  std::chrono::milliseconds (*longest_response)(const BackendOptions& options);
  // The connection to the backend server, for start-up warnings about its TLS; null when there
  // is none.
  const UpstreamOptions* (*upstream)(const BackendOptions& options);
  // The option that may name a place under the gateway's data directory ("{data_dir}" in the
  // configuration); null when the kind has none.
  std::string* (*data_dir_path)(BackendOptions& options);
};

// Every kind, in the order of BackendKind.
std::span<const BackendKindRow> BackendKindRows();

const BackendKindRow& RowOf(BackendKind kind);

// The row whose name is `name`; null when there is none.
const BackendKindRow* FindBackendKind(std::string_view name);

// The kinds' names quoted and listed for an error message: "'http', 'filesystem', 'webdav' or
// 's3'".
std::string BackendKindNames();

}  // namespace fencegate::adapters
