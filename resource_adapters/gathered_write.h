#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/container/small_vector.hpp>

#include "resource_adapters/http_header.h"

namespace fencegate::adapters {

// The buffers of one write: start line, one per header field, the end of the header, and a
// body piece with its chunk framing. Inline room for a typical header, so a write allocates
// nothing; the caller hands it to asio::async_write as is.
using WriteGather = boost::container::small_vector<boost::asio::const_buffer, 32>;

// Writes an HTTP/1.x message in pieces, as Beast's serializer does for a buffer_body (the
// header with the first piece, then each piece, chunk-framed when the header says chunked, the
// last chunk after the last piece), but as a flat list of buffers pointing into the header's
// own field storage. Beast's serializer hands out nested buffer views (buffers_cat of the start
// line, every field, body and chunk framing, then prefix and suffix views for each write and
// for consume): walking those cost more instructions than the rest of a proxied request.
class MessageWriter {
 public:
  // A new message; its body is not used (the pieces are given to Next). `header` must stay
  // alive and unchanged until the first piece is written. `with_body` false: no body may follow
  // whatever the header says (a response to HEAD, 1xx, 204, 304), so only the header goes out.
  template <bool isRequest, class Body>
  void Start(const boost::beast::http::message<isRequest, Body, Fields>& header, bool with_body) {
    start_line_.clear();
    if constexpr (isRequest) {
      start_line_.append(header.method_string());
      start_line_.push_back(' ');
      start_line_.append(header.target());
      start_line_.push_back(' ');
      AppendVersion(header.version());
    } else {
      AppendVersion(header.version());
      const unsigned status = header.result_int();
      const char digits[] = {' ', static_cast<char>('0' + status / 100 % 10),
                             static_cast<char>('0' + status / 10 % 10),
                             static_cast<char>('0' + status % 10), ' '};
      start_line_.append(digits, sizeof digits);
      start_line_.append(header.reason());
    }
    start_line_.append("\r\n");
    fields_ = &header;
    with_body_ = with_body;
    chunked_ = with_body && header.chunked();
    header_pending_ = true;
  }

  // Fills `gather` with what goes out next: the header if it has not been, then `body`, framed
  // as a chunk when chunked; `last` ends the message (the last chunk, when chunked). A piece
  // may be empty; the gather may then be empty too (nothing to write).
  void Next(boost::asio::const_buffer body, bool last, WriteGather& gather) {
    gather.clear();
    if (header_pending_) {
      header_pending_ = false;
      gather.push_back(boost::asio::buffer(start_line_));
      for (const auto& field : *fields_) AddField(field, gather);
      gather.push_back(boost::asio::buffer(kCrlf));
    }
    if (!with_body_) return;
    if (!chunked_) {
      if (body.size() > 0) gather.push_back(body);
      return;
    }
    if (body.size() > 0) {
      gather.push_back(ChunkHeader(body.size()));
      gather.push_back(body);
      gather.push_back(boost::asio::buffer(kCrlf));
    }
    if (last) gather.push_back(boost::asio::buffer(kLastChunk));
  }

 private:
  static constexpr std::string_view kCrlf = "\r\n";
  static constexpr std::string_view kFieldSeparator = ": ";
  static constexpr std::string_view kLastChunk = "0\r\n\r\n";

  void AppendVersion(unsigned version) {
    const char text[] = {'H', 'T',
                         'T', 'P',
                         '/', static_cast<char>('0' + version / 10 % 10),
                         '.', static_cast<char>('0' + version % 10)};
    start_line_.append(text, sizeof text);
  }

  // Beast keeps each field as one line, "name: value\r\n", in one allocation: when the views
  // show that layout the line goes out as one buffer, else as its four parts.
  static void AddField(const Fields::value_type& field, WriteGather& gather) {
    const std::string_view name = field.name_string();
    const std::string_view value = field.value();
    if (value.data() == name.data() + name.size() + kFieldSeparator.size() &&
        std::string_view(name.data() + name.size(), kFieldSeparator.size()) == kFieldSeparator &&
        std::string_view(value.data() + value.size(), kCrlf.size()) == kCrlf) {
      gather.push_back(boost::asio::buffer(
          name.data(), name.size() + kFieldSeparator.size() + value.size() + kCrlf.size()));
      return;
    }
    gather.push_back(boost::asio::buffer(name.data(), name.size()));
    gather.push_back(boost::asio::buffer(kFieldSeparator));
    gather.push_back(boost::asio::buffer(value.data(), value.size()));
    gather.push_back(boost::asio::buffer(kCrlf));
  }

  boost::asio::const_buffer ChunkHeader(std::size_t size) {
    static constexpr char kHex[] = "0123456789abcdef";
    char* const end = chunk_header_ + sizeof chunk_header_;
    char* p = end;
    *--p = '\n';
    *--p = '\r';
    do {
      *--p = kHex[size & 0xf];
      size >>= 4;
    } while (size != 0);
    return boost::asio::buffer(p, static_cast<std::size_t>(end - p));
  }

  std::string start_line_;
  const Fields* fields_ = nullptr;
  bool with_body_ = false;
  bool chunked_ = false;
  bool header_pending_ = false;
  char chunk_header_[2 * sizeof(std::size_t) + 2] = {};
};

}  // namespace fencegate::adapters
