#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "resource_adapters/adapter.h"

namespace fencegate::adapters::testing {

// The byte at `offset` of a generated body: a pattern that catches reordered or lost chunks.
char PatternByte(std::uint64_t offset);

// A client for adapter tests: feeds the request body in pieces and records the response.
// Completions are posted to the io_context, as a real connection would deliver them.
class FakeDownstream : public Downstream {
 public:
  // A request body from a string (empty: no body), handed out at most `piece_bytes` at a time.
  FakeDownstream(boost::asio::io_context& ioc, std::string body, std::size_t piece_bytes = 16384);
  // A generated body of `size` PatternByte bytes, produced on demand (never held in memory).
  static FakeDownstream Generated(boost::asio::io_context& ioc, std::uint64_t size,
                                  std::size_t piece_bytes);

  // Makes the read that would pass `offset` fail with `ec` (the client went away mid-body).
  void FailBodyAt(std::uint64_t offset, boost::system::error_code ec);
  // Keeps only the size of the response body, not the bytes (for large bodies).
  void DiscardResponseBody() { keep_response_body_ = false; }

  bool body_done() const override;
  void AsyncReadBody(boost::asio::mutable_buffer buffer, ReadHandler handler) override;
  void AsyncWriteResponse(ResponseHeader&& header, boost::asio::const_buffer body, bool last,
                          WriteHandler handler) override;
  void AsyncWriteBody(boost::asio::const_buffer body, bool last, WriteHandler handler) override;

  // What the adapter did.
  std::optional<ResponseHeader> response_header;
  std::string response_body;
  std::uint64_t response_body_size = 0;
  bool response_ended = false;
  std::uint64_t request_bytes_read = 0;
  std::size_t largest_read_buffer = 0;
  // Contract violations: two reads or writes outstanding, writes after the end, ...
  int violations = 0;

 private:
  FakeDownstream(boost::asio::io_context& ioc, std::string body, bool generated, std::uint64_t size,
                 std::size_t piece_bytes);
  void RecordBody(boost::asio::const_buffer body, bool last);

  boost::asio::io_context& ioc_;
  std::string body_;
  bool generated_;
  std::uint64_t body_size_;
  std::size_t piece_bytes_;
  std::optional<std::uint64_t> fail_at_;
  boost::system::error_code fail_error_;
  bool keep_response_body_ = true;
  bool read_outstanding_ = false;
  bool write_outstanding_ = false;
};

// Runs the io_context until `done` is true or `limit` passes; returns whether done.
bool RunUntil(boost::asio::io_context& ioc, const bool& done,
              std::chrono::milliseconds limit = std::chrono::seconds(60));

// Forwards one request through `adapter` and waits for the outcome.
ForwardOutcome ForwardAndWait(boost::asio::io_context& ioc, ResourceAdapter& adapter,
                              ForwardRequest request, FakeDownstream& downstream);

}  // namespace fencegate::adapters::testing
