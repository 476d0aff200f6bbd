#include "gateway/console/console_assets.h"

namespace fencegate::gateway {

const ConsoleAsset* FindConsoleAsset(std::string_view path) {
  for (const ConsoleAsset& asset : ConsoleAssets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

}  // namespace fencegate::gateway
