#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/tls_client/plain_or_tls_stream.h"

namespace fencegate::gateway {

// A client connection lives on its network thread's io_context for its whole life; its socket
// and stream name that executor type (see base/tls_client/plain_or_tls_stream.h for why).
using ClientSocket =
    boost::asio::ip::tcp::socket::rebind_executor<boost::asio::io_context::executor_type>::other;
using ClientStream = tls_client::TcpStream;

}  // namespace fencegate::gateway
