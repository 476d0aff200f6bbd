#pragma once

#include <cstdint>
#include <utility>

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional/optional.hpp>

#include "base/net/flat_fields.h"

namespace fencegate::adapters {

// Beast's http::parser, producing a message whose fields are FlatFields (http::parser is tied to
// basic_fields). The same rules: one message per parser (keep it in an optional and emplace a
// new one per message), the body given to Body::reader as it arrives. The chunk callbacks of
// http::parser are left out: nothing here uses them.
template <bool isRequest, class Body>
class MessageParser : public boost::beast::http::basic_parser<isRequest> {
 public:
  using value_type = boost::beast::http::message<isRequest, Body, FlatFields>;

  MessageParser() : reader_(message_.base(), message_.body()) {}
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  // Parses `block`, a complete header block (request or status line to the empty line), as
  // put() would. Its bytes are copied into the message's fields once, and the fields that stand
  // in it as they go on the wire refer to their lines there: no copy per field, and a header
  // forwarded unchanged is written out in a few runs of the client's own bytes.
  std::size_t put_header_block(boost::beast::string_view block, boost::beast::error_code& ec) {
    block_ = message_.CopyBlock(block);
    const std::size_t used = this->put(boost::asio::const_buffer(block.data(), block.size()), ec);
    block_ = {};
    return used;
  }

  value_type& get() { return message_; }
  const value_type& get() const { return message_; }
  value_type release() { return std::move(message_); }

 private:
  using string_view = boost::beast::string_view;
  using error_code = boost::beast::error_code;

  void on_request_impl(boost::beast::http::verb method, string_view method_string,
                       string_view target, int version, error_code& ec) override {
    if constexpr (isRequest) {
      if (used_) {
        ec = boost::beast::http::error::stale_parser;
        return;
      }
      used_ = true;
      message_.SetParsedTarget(target, block_);
      if (method != boost::beast::http::verb::unknown) {
        message_.method(method);
      } else {
        message_.method_string(method_string);
      }
      message_.version(version);
    }
  }

  void on_response_impl(int status, string_view reason, int version, error_code& ec) override {
    if constexpr (!isRequest) {
      if (used_) {
        ec = boost::beast::http::error::stale_parser;
        return;
      }
      used_ = true;
      message_.result(status);
      message_.version(version);
      message_.reason(reason);
    }
  }

  void on_field_impl(boost::beast::http::field name, string_view name_string, string_view value,
                     error_code&) override {
    message_.AppendParsed(name, name_string, value, block_);
  }

  void on_header_impl(error_code& ec) override { ec = {}; }

  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         error_code& ec) override {
    reader_.init(content_length, ec);
  }

  std::size_t on_body_impl(string_view body, error_code& ec) override {
    return reader_.put(boost::asio::const_buffer(body.data(), body.size()), ec);
  }

  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}

  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) override {
    return reader_.put(boost::asio::const_buffer(body.data(), body.size()), ec);
  }

  void on_finish_impl(error_code& ec) override { reader_.finish(ec); }

  value_type message_;
  FlatFields::BlockCopy block_;  // while put_header_block parses
  typename Body::reader reader_;
  bool used_ = false;
};

}  // namespace fencegate::adapters
