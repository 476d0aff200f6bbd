#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "base/net/http_header.h"

#include "resource_adapters/adapter.h"

namespace fencegate::adapters::webdav {

// The client side of a fenced write as the passthrough adapter sees it: the request body is
// read from the client as it comes, but the response is kept until Release(), so the client
// gets its answer only once the token is stored and the locks are released. Responses to
// writes are short status pages; one larger than kMaxHeldBytes fails the write.
class HeldResponse : public Downstream {
 public:
  static constexpr std::size_t kMaxHeldBytes = 1 << 20;

  HeldResponse(boost::asio::io_context& ioc, Downstream& client) : ioc_(ioc), client_(client) {}

  bool body_done() const override { return client_.body_done(); }
  void AsyncReadBody(boost::asio::mutable_buffer buffer, ReadHandler handler) override {
    client_.AsyncReadBody(buffer, std::move(handler));
  }
  void AsyncWriteResponse(ResponseHeader&& header, boost::asio::const_buffer body, bool last,
                          WriteHandler handler) override;
  void AsyncWriteBody(boost::asio::const_buffer body, bool last, WriteHandler handler) override;

  // True once the whole response was kept.
  bool complete() const { return complete_; }
  unsigned status() const { return header_ ? header_->result_int() : 0; }
  // Sends the kept response to the client (one write: header and body).
  void Release(WriteHandler handler);

 private:
  void Keep(boost::asio::const_buffer body, bool last, WriteHandler handler);

  boost::asio::io_context& ioc_;
  Downstream& client_;
  std::optional<ResponseHeader> header_;
  std::string body_;
  bool complete_ = false;
};

}  // namespace fencegate::adapters::webdav
