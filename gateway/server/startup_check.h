#pragma once

#include <vector>

#include "gateway/config/config.h"
#include "gateway/config/config_loader.h"

namespace fencegate::gateway {

// What start-up would load besides the file itself, checked without binding a port or opening
// the store: the listeners' certificates parse and match their keys, every client TLS setting
// (https backends, store.tls, verify_tokens.tls) builds a context, and no fence store was left
// behind at a working-directory-relative path (gateway/cli/store_location.h), and `user:` and
// `group:` name accounts that exist. For --check-config
// and a reload, so that both refuse what a start would fail on. Errors name the config file and
// the key; they carry no line (the values were read already).
std::vector<ConfigError> CheckWhatStartWouldLoad(const Config& config);

}  // namespace fencegate::gateway
