#include "resource_adapters/registry/registry.h"

#include <algorithm>
#include <utility>

#include "resource_adapters/filesystem/filesystem_adapter.h"
#include "resource_adapters/http/http_adapter.h"
#include "resource_adapters/s3/s3_adapter.h"
#include "resource_adapters/webdav/webdav_adapter.h"

namespace fencegate::adapters {
namespace {

using std::chrono::milliseconds;

constexpr BackendKindRow kRows[] = {
    {
        .kind = BackendKind::kHttp,
        .name = "http",
        .make_factory =
            [](const BackendOptions& options, std::shared_ptr<RelayBudget> budget,
               std::string* error) {
              HttpAdapterOptions http = options.http;
              http.relay_budget = std::move(budget);
              return MakeHttpAdapterFactory(std::move(http), error);
            },
        .longest_response =
            [](const BackendOptions& options) { return options.http.response_timeout; },
        .upstream = [](const BackendOptions& options) -> const UpstreamOptions* {
          return &options.http;
        },
        .data_dir_path = [](BackendOptions&) -> std::string* { return nullptr; },
    },
    {
        .kind = BackendKind::kFilesystem,
        .name = "filesystem",
        .make_factory =
            [](const BackendOptions& options, std::shared_ptr<RelayBudget> budget,
               std::string* error) {
              FilesystemAdapterOptions filesystem = options.filesystem;
              filesystem.relay_budget = std::move(budget);
              return MakeFilesystemAdapterFactory(std::move(filesystem), error);
            },
        .longest_response = [](const BackendOptions&) { return milliseconds(0); },
        .upstream = [](const BackendOptions&) -> const UpstreamOptions* { return nullptr; },
        .data_dir_path = [](BackendOptions& options) { return &options.filesystem.root; },
    },
    {
        // An http passthrough for every request, plus the lock sequence around fenced writes.
        .kind = BackendKind::kWebdav,
        .name = "webdav",
        .make_factory = [](const BackendOptions& options, std::shared_ptr<RelayBudget> budget,
                           std::string* error) -> std::unique_ptr<AdapterFactory> {
          HttpAdapterOptions http = options.http;
          http.relay_budget = std::move(budget);
          auto passthrough = MakeHttpAdapterFactory(std::move(http), error);
          if (!passthrough) return nullptr;
          return MakeWebdavAdapterFactory(options.webdav, std::move(passthrough), error);
        },
        .longest_response =
            [](const BackendOptions& options) {
              return std::max(options.http.response_timeout, options.webdav.response_timeout);
            },
        .upstream = [](const BackendOptions& options) -> const UpstreamOptions* {
          return &options.http;
        },
        .data_dir_path = [](BackendOptions&) -> std::string* { return nullptr; },
    },
    {
        .kind = BackendKind::kS3,
        .name = "s3",
        .make_factory = [](const BackendOptions& options, std::shared_ptr<RelayBudget>,
                           std::string* error) { return MakeS3AdapterFactory(options.s3, error); },
        .longest_response =
            [](const BackendOptions& options) { return options.s3.response_timeout; },
        .upstream = [](const BackendOptions& options) -> const UpstreamOptions* {
          return &options.s3;
        },
        .data_dir_path = [](BackendOptions&) -> std::string* { return nullptr; },
    },
};

static_assert(std::size(kRows) == kBackendKindCount, "one row per BackendKind");
static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kRows); ++i) {
        if (kRows[i].kind != static_cast<BackendKind>(i)) return false;
      }
      return true;
    }(),
    "rows in the order of BackendKind");

}  // namespace

std::span<const BackendKindRow> BackendKindRows() { return kRows; }

const BackendKindRow& RowOf(BackendKind kind) { return kRows[static_cast<std::size_t>(kind)]; }

const BackendKindRow* FindBackendKind(std::string_view name) {
  for (const BackendKindRow& row : kRows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::string BackendKindNames() {
  std::string names;
  for (std::size_t i = 0; i < std::size(kRows); ++i) {
    if (i > 0) names += i + 1 == std::size(kRows) ? " or " : ", ";
    names += "'" + std::string(kRows[i].name) + "'";
  }
  return names;
}

}  // namespace fencegate::adapters
