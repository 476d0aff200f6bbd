#pragma once

#include <boost/beast/http/fields.hpp>

#include "base/net/http_header.h"

namespace fencegate::adapters {

// Removes the fields that describe one connection rather than the message (RFC 9110 7.6.1):
// Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade and every
// field the Connection field names. The framing of the next hop is chosen by whoever writes it.
void StripHopByHopFields(Fields& fields);

}  // namespace fencegate::adapters
