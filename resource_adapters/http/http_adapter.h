#pragma once

#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "resource_adapters/http/http_adapter_options.h"

namespace fencegate::adapters {

// Null with `error` set when the TLS files of an https backend do not load.
std::unique_ptr<AdapterFactory> MakeHttpAdapterFactory(HttpAdapterOptions options,
                                                       std::string* error = nullptr);

}  // namespace fencegate::adapters
