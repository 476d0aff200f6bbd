#pragma once

#include <memory>
#include <string>

#include "resource_adapters/adapter.h"
#include "resource_adapters/webdav/webdav_adapter_options.h"

namespace fencegate::adapters {

// Fenced writes (PUT, DELETE, MOVE, COPY, MKCOL that carry an admitted token) take an exclusive
// WebDAV LOCK on every resource they change, read the token stored with each (a dead property,
// kTokenProperty in kTokenNamespace), refuse the write when a stored token is higher (409
// stale-token-at-backend), do the same with the member token kept on the parent collection
// (under a depth-0 LOCK of it) when they create, remove or replace a member, so that a token
// outlives DELETE and MOVE, store the new token (PROPPATCH), send the write itself with the
// lock tokens in the If header, and UNLOCK, on every path. The write itself, and every other
// request, goes through `passthrough` (an HTTP adapter factory for the same server), which
// streams bodies both ways. LOCK, UNLOCK and PROPPATCH from clients are refused (405): the
// gateway owns the locks and the token property.
// Null with `error` set when the TLS files of an https server do not load.
std::unique_ptr<AdapterFactory> MakeWebdavAdapterFactory(
    WebdavAdapterOptions options, std::unique_ptr<AdapterFactory> passthrough,
    std::string* error = nullptr);

}  // namespace fencegate::adapters
