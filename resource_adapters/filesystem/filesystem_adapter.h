#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "resource_adapters/filesystem/filesystem_adapter_options.h"

namespace fencegate::adapters {

// Serves GET/HEAD/PUT/DELETE of files under `root`. Writes go to a temp file that is fsynced and
// renamed over the target, then the directory is fsynced. The token that wrote a file is kept
// with it and returned in the Fencing-Token response header. Returns nullptr and sets `error`
// when `root` cannot be created or opened.
std::unique_ptr<AdapterFactory> MakeFilesystemAdapterFactory(FilesystemAdapterOptions options,
                                                             std::string* error);

}  // namespace fencegate::adapters
