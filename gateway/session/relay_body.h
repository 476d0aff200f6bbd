#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <boost/system/error_code.hpp>

namespace fencegate::gateway {

// The request body type of a client session: Beast's buffer_body for parsing (the parser
// writes body bytes into a caller-provided buffer), except that a piece the session already
// read into that buffer at its current position is only accounted, not copied onto itself.
// That is how a Content-Length body is read: straight from the socket into the adapter's
// relay buffer, then handed to the parser so that it still tracks the body's end.
struct RelayBody {
  struct value_type {
    void* data = nullptr;  // where the next body byte goes; null: the parser waits (need_buffer)
    std::size_t size = 0;  // room left at `data`
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(boost::beast::http::header<isRequest, Fields>&, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>&, boost::system::error_code& ec) { ec = {}; }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::system::error_code& ec) {
      if (body_.data == nullptr) {
        ec = boost::beast::http::error::need_buffer;
        return 0;
      }
      std::size_t taken = 0;
      for (const boost::asio::const_buffer piece : boost::beast::buffers_range_ref(buffers)) {
        const std::size_t n = std::min(piece.size(), body_.size);
        if (n > 0 && piece.data() != body_.data) std::memcpy(body_.data, piece.data(), n);
        body_.data = static_cast<char*>(body_.data) + n;
        body_.size -= n;
        taken += n;
        if (n < piece.size()) {
          ec = boost::beast::http::error::need_buffer;
          return taken;
        }
      }
      ec = {};
      return taken;
    }

    void finish(boost::system::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

}  // namespace fencegate::gateway
