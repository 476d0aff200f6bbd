#pragma once

#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "resource_adapters/s3/s3_adapter_options.h"

namespace fencegate::adapters {

// The `s3` adapter: re-signs every request with AWS SigV4 and makes fenced writes conditional
// at the backend (README "S3 backends"). Null with `error` set when the TLS files do not load.
std::unique_ptr<AdapterFactory> MakeS3AdapterFactory(S3AdapterOptions options, std::string* error);

}  // namespace fencegate::adapters
