#include "tests/resource_adapters/fake_downstream.h"

#include <algorithm>
#include <utility>

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

namespace fencegate::adapters::testing {

char PatternByte(std::uint64_t offset) {
  return static_cast<char>((offset * 131 + offset / 4093) % 251);
}

FakeDownstream::FakeDownstream(boost::asio::io_context& ioc, std::string body,
                               std::size_t piece_bytes)
    : FakeDownstream(ioc, std::move(body), false, 0, piece_bytes) {
  body_size_ = body_.size();
}

FakeDownstream::FakeDownstream(boost::asio::io_context& ioc, std::string body, bool generated,
                               std::uint64_t size, std::size_t piece_bytes)
    : ioc_(ioc),
      body_(std::move(body)),
      generated_(generated),
      body_size_(size),
      piece_bytes_(piece_bytes) {}

FakeDownstream FakeDownstream::Generated(boost::asio::io_context& ioc, std::uint64_t size,
                                         std::size_t piece_bytes) {
  return FakeDownstream(ioc, {}, true, size, piece_bytes);
}

void FakeDownstream::FailBodyAt(std::uint64_t offset, boost::system::error_code ec) {
  fail_at_ = offset;
  fail_error_ = ec;
}

bool FakeDownstream::body_done() const { return request_bytes_read == body_size_; }

void FakeDownstream::AsyncReadBody(boost::asio::mutable_buffer buffer, ReadHandler handler) {
  if (read_outstanding_) {
    ++violations;
  }
  read_outstanding_ = true;
  largest_read_buffer = std::max(largest_read_buffer, buffer.size());
  const std::uint64_t remaining = body_size_ - request_bytes_read;
  const std::size_t count =
      static_cast<std::size_t>(std::min<std::uint64_t>({buffer.size(), piece_bytes_, remaining}));
  if (fail_at_ && request_bytes_read + count >= *fail_at_) {
    boost::asio::post(ioc_, [this, handler = std::move(handler)] {
      read_outstanding_ = false;
      handler(fail_error_, 0, false);
    });
    return;
  }
  char* out = static_cast<char*>(buffer.data());
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t offset = request_bytes_read + i;
    out[i] = generated_ ? PatternByte(offset) : body_[offset];
  }
  request_bytes_read += count;
  const bool done = request_bytes_read == body_size_;
  boost::asio::post(ioc_, [this, count, done, handler = std::move(handler)] {
    read_outstanding_ = false;
    handler({}, count, done);
  });
}

void FakeDownstream::AsyncWriteResponse(ResponseHeader&& header, boost::asio::const_buffer body,
                                        bool last, WriteHandler handler) {
  if (response_header) {
    ++violations;
  }
  response_header = std::move(header);
  RecordBody(body, last);
  boost::asio::post(ioc_, [this, handler = std::move(handler)] {
    write_outstanding_ = false;
    handler({});
  });
}

void FakeDownstream::AsyncWriteBody(boost::asio::const_buffer body, bool last,
                                    WriteHandler handler) {
  if (!response_header) {
    ++violations;
  }
  RecordBody(body, last);
  boost::asio::post(ioc_, [this, handler = std::move(handler)] {
    write_outstanding_ = false;
    handler({});
  });
}

void FakeDownstream::RecordBody(boost::asio::const_buffer body, bool last) {
  if (write_outstanding_ || response_ended) {
    ++violations;
  }
  write_outstanding_ = true;
  response_body_size += body.size();
  if (keep_response_body_) {
    response_body.append(static_cast<const char*>(body.data()), body.size());
  }
  response_ended = last;
}

bool RunUntil(boost::asio::io_context& ioc, const bool& done, std::chrono::milliseconds limit) {
  // Work may be out on other threads (file I/O): keep run_one waiting for it.
  auto guard = boost::asio::make_work_guard(ioc);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    ioc.run_one_for(std::chrono::milliseconds(50));
  }
  guard.reset();
  // Let handlers already queued (e.g. closing sockets) finish without blocking.
  ioc.poll();
  ioc.restart();
  return done;
}

ForwardOutcome ForwardAndWait(boost::asio::io_context& ioc, ResourceAdapter& adapter,
                              ForwardRequest request, FakeDownstream& downstream) {
  bool done = false;
  ForwardOutcome result;
  adapter.Forward(request, downstream, [&](ForwardOutcome outcome) {
    result = std::move(outcome);
    done = true;
  });
  if (!RunUntil(ioc, done)) {
    ADD_FAILURE_AT(__FILE__, __LINE__);
  }
  return result;
}

}  // namespace fencegate::adapters::testing
