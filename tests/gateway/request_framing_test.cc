#include "gateway/http/request_framing.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

namespace http = boost::beast::http;

TEST(FindHeaderBlockEndTest, FindsTerminatorAndResumes) {
  const std::string request = "GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY";
  EXPECT_EQ(FindHeaderBlockEnd(request, 0), request.size() - 4);
  // Split across reads: the terminator straddles the previously scanned length.
  const std::string partial = request.substr(0, request.size() - 6);
  EXPECT_FALSE(FindHeaderBlockEnd(partial, 0).has_value());
  EXPECT_EQ(FindHeaderBlockEnd(request, partial.size()), request.size() - 4);
  EXPECT_FALSE(FindHeaderBlockEnd("GET / HTTP/1.1\r\nHost: a\r\n", 0).has_value());
  EXPECT_FALSE(FindHeaderBlockEnd("", 0).has_value());
}

TEST(ObsFoldTest, DetectsContinuationLines) {
  EXPECT_TRUE(ContainsObsFold("GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n"));
  EXPECT_TRUE(ContainsObsFold("GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n"));
  EXPECT_TRUE(ContainsObsFold("GET / HTTP/1.1\r\n Host: a\r\n\r\n"));
}

TEST(ObsFoldTest, AcceptsOrdinaryHeaders) {
  EXPECT_FALSE(ContainsObsFold("GET / HTTP/1.1\r\nHost: a\r\nX-A: b  c\t\r\n\r\n"));
  EXPECT_FALSE(ContainsObsFold("GET / HTTP/1.1\r\n\r\n"));
}

adapters::RequestHeader Header(std::initializer_list<std::pair<const char*, const char*>> fields) {
  adapters::RequestHeader header;
  for (const auto& [name, value] : fields) header.insert(name, value);
  return header;
}

TEST(CheckRequestFramingTest, AcceptsSingleLengthOrChunked) {
  EXPECT_EQ(CheckRequestFraming(Header({{"Content-Length", "5"}})), FramingViolation::kNone);
  EXPECT_EQ(CheckRequestFraming(Header({{"Transfer-Encoding", " Chunked "}})),
            FramingViolation::kNone);
  EXPECT_EQ(CheckRequestFraming(Header({})), FramingViolation::kNone);
}

TEST(CheckRequestFramingTest, RefusesAmbiguousFraming) {
  EXPECT_EQ(
      CheckRequestFraming(Header({{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}})),
      FramingViolation::kContentLengthWithTransferEncoding);
  EXPECT_EQ(CheckRequestFraming(Header({{"Content-Length", "5"}, {"Content-Length", "5"}})),
            FramingViolation::kRepeatedContentLength);
  EXPECT_EQ(CheckRequestFraming(Header({{"Content-Length", "5, 5"}})),
            FramingViolation::kRepeatedContentLength);
  EXPECT_EQ(CheckRequestFraming(
                Header({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}})),
            FramingViolation::kRepeatedTransferEncoding);
  EXPECT_EQ(CheckRequestFraming(Header({{"Transfer-Encoding", "gzip, chunked"}})),
            FramingViolation::kUnsupportedTransferEncoding);
  EXPECT_EQ(CheckRequestFraming(Header({{"Transfer-Encoding", "gzip"}})),
            FramingViolation::kUnsupportedTransferEncoding);
  EXPECT_FALSE(FramingViolationDetail(FramingViolation::kRepeatedContentLength).empty());
}

}  // namespace
}  // namespace fencegate::gateway
