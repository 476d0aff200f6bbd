#pragma once

#include <boost/beast/http/message.hpp>

#include "base/net/field_block_pool.h"
#include "base/net/flat_fields.h"

namespace fencegate::adapters {

// The header types of the request path: the gateway parses into them, adapters forward them.
using Fields = FlatFields;
using RequestHeader = boost::beast::http::request_header<Fields>;
using ResponseHeader = boost::beast::http::response_header<Fields>;

}  // namespace fencegate::adapters
