#include "resource_adapters/webdav/held_response.h"

#include <utility>

#include <boost/asio/post.hpp>
#include <boost/beast/http/error.hpp>

namespace fencegate::adapters::webdav {

void HeldResponse::AsyncWriteResponse(ResponseHeader&& header, boost::asio::const_buffer body,
                                      bool last, WriteHandler handler) {
  header_ = std::move(header);
  Keep(body, last, std::move(handler));
}

void HeldResponse::AsyncWriteBody(boost::asio::const_buffer body, bool last, WriteHandler handler) {
  Keep(body, last, std::move(handler));
}

void HeldResponse::Keep(boost::asio::const_buffer body, bool last, WriteHandler handler) {
  boost::system::error_code ec;
  if (body_.size() + body.size() > kMaxHeldBytes) {
    ec = http::error::body_limit;
  } else {
    body_.append(static_cast<const char*>(body.data()), body.size());
    complete_ = last;
  }
  // Completions never run inside the call that started them, as on a real connection.
  boost::asio::post(ioc_, [handler = std::move(handler), ec] { handler(ec); });
}

void HeldResponse::Release(WriteHandler handler) {
  // The body is complete now: its length frames the response (204 and 304 have none).
  header_->erase(http::field::transfer_encoding);
  const unsigned status = header_->result_int();
  if (status == 204 || status == 304) {
    header_->erase(http::field::content_length);
  } else {
    header_->set(http::field::content_length, std::to_string(body_.size()));
  }
  client_.AsyncWriteResponse(std::move(*header_), boost::asio::buffer(body_), true,
                             std::move(handler));
}

}  // namespace fencegate::adapters::webdav
