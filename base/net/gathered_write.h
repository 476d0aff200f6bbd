#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/system/error_code.hpp>

#include "base/net/field_block_pool.h"
#include "base/net/http_header.h"

namespace fencegate::adapters {

// The buffers of one write: everything before the body piece (the header the first time, a
// chunk's size line), the body piece as is, and what follows it (a chunk's CRLF, the last
// chunk). Three fixed buffers, unused ones empty: Asio's write of a std::array copies three
// buffers each time it moves the operation, where a list of one buffer per field cost it
// more than the rest of a request's write.
using WriteGather = std::array<boost::asio::const_buffer, 3>;

// Writes an HTTP/1.x message in pieces, as Beast's serializer does for a buffer_body (the
// header with the first piece, then each piece, chunk-framed when the header says chunked, the
// last chunk after the last piece). The header is copied into one buffer of pooled memory; the
// body pieces are not copied. Beast's serializer hands out nested buffer views (buffers_cat of
// the start line, every field, body and chunk framing, then prefix and suffix views for each
// write and for consume): walking those cost more instructions than the rest of a proxied
// request.
class MessageWriter {
 public:
  // A new message; its body is not used (the pieces are given to Next). `with_body` false: no
  // body may follow whatever the header says (a response to HEAD, 1xx, 204, 304), so only the
  // header goes out.
  template <bool isRequest, class Body>
  void Start(const boost::beast::http::message<isRequest, Body, Fields>& header, bool with_body) {
    // Sized first and then copied into: one resize instead of an append (and its capacity
    // check) per piece.
    std::size_t size = kVersionSize + 2 * kCrlf.size();
    if constexpr (isRequest) {
      size += header.method_string().size() + 1 + header.target().size() + 1;
    } else {
      size += kStatusSize + header.reason().size();
    }
    for (const auto& field : header) size += field.line().size();
    // Reserved up to the end of the pooled block it gets, at least kHeadReserve: a small body
    // piece may then follow the header in it (Next), and a larger header costs one allocation,
    // not one and a regrowth.
    const std::size_t reserve = FieldBlockPool::BlockBytes(std::max(size, kHeadReserve) + 1) - 1;
    if (head_.capacity() < reserve) head_.reserve(reserve);
    head_.resize(size);
    char* out = head_.data();
    if constexpr (isRequest) {
      out = Put(out, header.method_string());
      *out++ = ' ';
      out = Put(out, header.target());
      *out++ = ' ';
      out = PutVersion(out, header.version());
    } else {
      out = PutVersion(out, header.version());
      const unsigned status = header.result_int();
      *out++ = ' ';
      *out++ = static_cast<char>('0' + status / 100 % 10);
      *out++ = static_cast<char>('0' + status / 10 % 10);
      *out++ = static_cast<char>('0' + status % 10);
      *out++ = ' ';
      out = Put(out, header.reason());
    }
    out = Put(out, kCrlf);
    // Lines that lie end to end in the fields' text go as one copy: the parser stores a
    // client's fields that way, so a forwarded header is a few runs rather than a copy per field.
    std::string_view run;
    for (const auto& field : header) {
      const std::string_view line = field.line();
      if (!run.empty() && run.data() + run.size() == line.data()) {
        run = std::string_view(run.data(), run.size() + line.size());
        continue;
      }
      if (!run.empty()) out = Put(out, run);
      run = line;
    }
    if (!run.empty()) out = Put(out, run);
    Put(out, kCrlf);
    with_body_ = with_body;
    chunked_ = with_body && header.chunked();
    header_pending_ = true;
  }

  // Fills `gather` with what goes out next: the header if it has not been, then `body`, framed
  // as a chunk when chunked; `last` ends the message (the last chunk, when chunked). A piece
  // may be empty; the gather may then hold no bytes (nothing to write).
  void Next(boost::asio::const_buffer body, bool last, WriteGather& gather) {
    if (header_pending_) {
      header_pending_ = false;
    } else {
      head_.clear();
    }
    if (!with_body_) body = {};
    std::string_view tail;
    if (chunked_) {
      if (body.size() > 0) {
        AppendChunkSize(body.size());
        tail = kChunkEnd;
      }
      if (last) tail = body.size() > 0 ? kChunkEndAndLastChunk : kLastChunk;
    }
    // A small piece (a short response, a typical error body) is copied behind the header when
    // the header's pooled block has room: the write is then one buffer, which Asio sends with
    // send() rather than sendmsg() and its iovec array.
    if (body.size() > 0 && head_.size() + body.size() + tail.size() <= head_.capacity()) {
      head_.append(static_cast<const char*>(body.data()), body.size()).append(tail);
      gather = {boost::asio::buffer(head_), {}, {}};
      return;
    }
    gather = {boost::asio::buffer(head_), body, boost::asio::buffer(tail)};
  }

 private:
  static constexpr std::string_view kCrlf = "\r\n";
  // The possible tails of a chunked piece, as views of one string that outlives every write.
  static constexpr std::string_view kChunkEndAndLastChunk = "\r\n0\r\n\r\n";
  static constexpr std::string_view kChunkEnd = kChunkEndAndLastChunk.substr(0, 2);
  static constexpr std::string_view kLastChunk = kChunkEndAndLastChunk.substr(2);
  // Room for a typical header and a short body behind it: a 512-byte pooled block holds 511
  // characters and the terminator.
  static constexpr std::size_t kHeadReserve = 511;

  static constexpr std::size_t kVersionSize = 8;  // HTTP/1.1
  static constexpr std::size_t kStatusSize = 5;   // " 200 "

  static char* Put(char* out, std::string_view text) {
    std::memcpy(out, text.data(), text.size());
    return out + text.size();
  }

  static char* PutVersion(char* out, unsigned version) {
    const char text[kVersionSize] = {'H', 'T',
                                     'T', 'P',
                                     '/', static_cast<char>('0' + version / 10 % 10),
                                     '.', static_cast<char>('0' + version % 10)};
    return Put(out, std::string_view(text, sizeof text));
  }

  void AppendChunkSize(std::size_t size) {
    static constexpr char kHex[] = "0123456789abcdef";
    char digits[2 * sizeof(std::size_t)];
    char* const end = digits + sizeof digits;
    char* p = end;
    do {
      *--p = kHex[size & 0xf];
      size >>= 4;
    } while (size != 0);
    head_.append(p, static_cast<std::size_t>(end - p)).append(kCrlf);
  }

  std::basic_string<char, std::char_traits<char>, FieldAllocator<char>> head_;
  bool with_body_ = false;
  bool chunked_ = false;
  bool header_pending_ = false;
};

// Drops the first `bytes` bytes of `gather` (they were written).
inline void ConsumeGather(WriteGather& gather, std::size_t bytes) {
  for (boost::asio::const_buffer& buffer : gather) {
    const std::size_t used = std::min(bytes, buffer.size());
    buffer += used;
    bytes -= used;
  }
}

// Sends as much of `gather` as the socket `fd` takes at once, without blocking, and drops what
// went out; true when nothing is left. False on a full socket buffer and on any error (the
// asynchronous write that follows meets the error again and reports it). A proxied request's
// writes nearly always go out whole: the caller then goes on at once instead of through
// Asio's reactor operation and a posted completion (an operation, two atomic counts and a
// pass through the scheduler's queue per write).
bool SendAtOnce(int fd, WriteGather& gather);

// SendAtOnce on a plain connection; a TLS one always takes the asynchronous path.
template <class Stream>
bool SendAtOnce(Stream& stream, WriteGather& gather) {
  return !stream.is_tls() && SendAtOnce(stream.socket().native_handle(), gather);
}

// Writes all of `gather` to `stream`, then calls handler(error_code). Asio's async_write
// without its composed operation, which copies the buffer array and walks it through
// consuming_buffers at every step (~300 instructions a write): a loop of async_write_some that
// advances `gather` in place after a short write. `stream` and `gather` are held by reference:
// both must outlive the write, and `gather` must not be touched until `handler` runs.
template <class Stream, class Handler>
void AsyncWriteAll(Stream& stream, WriteGather& gather, Handler&& handler) {
  auto on_written = [&stream, &gather, handler = std::forward<Handler>(handler)](
                        boost::system::error_code ec, std::size_t bytes) mutable {
    if (!ec) {
      ConsumeGather(gather, bytes);
      if (boost::asio::buffer_size(gather) != 0) {
        AsyncWriteAll(stream, gather, std::move(handler));
        return;
      }
    }
    handler(ec);
  };
  // One buffer left (a header alone, or a small body copied behind it): given as a single
  // buffer, Asio writes it with send() instead of building an iovec array for sendmsg().
  if (gather[1].size() == 0 && gather[2].size() == 0) {
    stream.async_write_some(gather[0], std::move(on_written));
  } else {
    stream.async_write_some(gather, std::move(on_written));
  }
}

}  // namespace fencegate::adapters
