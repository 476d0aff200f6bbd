#pragma once

#include <cstddef>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/container/small_vector.hpp>
#include <boost/system/error_code.hpp>

namespace fencegate::adapters {

// The buffers of one serializer step: start line, one per header field, body and chunk
// framing. Inline room for a typical header, so a write allocates nothing.
using WriteGather = boost::container::small_vector<boost::asio::const_buffer, 24>;

// http::async_write / async_write_header for a Beast serializer, but each step's buffers are
// first copied out (as buffer descriptors, not bytes) into `gather`, a flat vector, and the
// socket write iterates that. Beast's own write op hands the serializer's nested buffer views
// (buffers_cat of header fields, body and chunk framing, wrapped again in prefix/suffix views
// by the stream) to the socket, and walking those costs more than the rest of a small request.
//
// Same results as Beast's: completes with {} once the message (or, with header_only, its
// header) is written, or with http::error::need_buffer when a buffer_body with `more` set has
// been written out and the serializer wants the next piece. `gather` is scratch space owned by
// the caller; it must stay alive and untouched until the handler runs.
template <class Stream, class Serializer>
class GatheredWriteOp {
 public:
  GatheredWriteOp(Stream& stream, Serializer& serializer, WriteGather& gather, bool header_only)
      : stream_(stream), serializer_(serializer), gather_(gather), header_only_(header_only) {}

  template <class Self>
  void operator()(Self& self) {
    Step(self, /*initiating=*/true);
  }

  template <class Self>
  void operator()(Self& self, boost::system::error_code ec, std::size_t bytes) {
    if (completing_) {
      self.complete(ec, total_);
      return;
    }
    if (ec) {
      self.complete(ec, total_);
      return;
    }
    serializer_.consume(bytes);
    total_ += bytes;
    Step(self, /*initiating=*/false);
  }

 private:
  bool Done() const { return header_only_ ? serializer_.is_header_done() : serializer_.is_done(); }

  template <class Self>
  void Step(Self& self, bool initiating) {
    boost::system::error_code ec;
    if (!Done()) {
      gather_.clear();
      serializer_.next(ec, [this](boost::system::error_code&, const auto& buffers) {
        for (const boost::asio::const_buffer buffer : boost::beast::buffers_range_ref(buffers)) {
          if (buffer.size() > 0) gather_.push_back(buffer);
        }
      });
      if (!ec) {
        boost::asio::async_write(stream_, gather_, std::move(self));
        return;
      }
    }
    if (!initiating) {
      self.complete(ec, total_);
      return;
    }
    // Nothing to write at all: complete through the executor, never inside the initiating call.
    completing_ = true;
    boost::asio::post(stream_.get_executor(),
                      [self = std::move(self), ec]() mutable { self(ec, 0); });
  }

  Stream& stream_;
  Serializer& serializer_;
  WriteGather& gather_;
  const bool header_only_;
  bool completing_ = false;
  std::size_t total_ = 0;
};

// Writes the whole message (or until the serializer needs the next body buffer).
template <class Stream, class Serializer, class Handler>
auto AsyncWriteGathered(Stream& stream, Serializer& serializer, WriteGather& gather,
                        Handler&& handler) {
  return boost::asio::async_compose<Handler, void(boost::system::error_code, std::size_t)>(
      GatheredWriteOp<Stream, Serializer>(stream, serializer, gather, false), handler, stream);
}

// Writes the header only (the serializer is switched to split mode, as async_write_header does).
template <class Stream, class Serializer, class Handler>
auto AsyncWriteHeaderGathered(Stream& stream, Serializer& serializer, WriteGather& gather,
                              Handler&& handler) {
  serializer.split(true);
  return boost::asio::async_compose<Handler, void(boost::system::error_code, std::size_t)>(
      GatheredWriteOp<Stream, Serializer>(stream, serializer, gather, true), handler, stream);
}

}  // namespace fencegate::adapters
