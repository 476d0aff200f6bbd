#include "gateway/http/request_framing.h"

#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

namespace http = boost::beast::http;

// The scan of a block that arrives whole.
HeaderBlockScan ScanWhole(std::string_view data) {
  HeaderBlockScan scan;
  EXPECT_TRUE(FindHeaderBlockEnd(data, &scan).has_value()) << data;
  return scan;
}

TEST(FindHeaderBlockEndTest, FindsTerminatorAndResumes) {
  const std::string request = "GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY";
  HeaderBlockScan whole;
  EXPECT_EQ(FindHeaderBlockEnd(request, &whole), request.size() - 4);
  // Split across reads: the terminator straddles the previously scanned length.
  const std::string partial = request.substr(0, request.size() - 6);
  HeaderBlockScan split;
  EXPECT_FALSE(FindHeaderBlockEnd(partial, &split).has_value());
  EXPECT_EQ(split.scanned, partial.size());
  EXPECT_EQ(FindHeaderBlockEnd(request, &split), request.size() - 4);
  // Every split point finds the same end.
  for (std::size_t at = 0; at < request.size() - 4; ++at) {
    HeaderBlockScan scan;
    EXPECT_FALSE(FindHeaderBlockEnd(std::string_view(request).substr(0, at), &scan).has_value());
    EXPECT_EQ(FindHeaderBlockEnd(request, &scan), request.size() - 4) << at;
    EXPECT_FALSE(scan.obs_fold) << at;
  }
  HeaderBlockScan open;
  EXPECT_FALSE(FindHeaderBlockEnd("GET / HTTP/1.1\r\nHost: a\r\n", &open).has_value());
  HeaderBlockScan empty;
  EXPECT_FALSE(FindHeaderBlockEnd("", &empty).has_value());
}

TEST(ObsFoldTest, DetectsContinuationLines) {
  EXPECT_TRUE(ScanWhole("GET / HTTP/1.1\r\nX-A: a\r\n b\r\n\r\n").obs_fold);
  EXPECT_TRUE(ScanWhole("GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n").obs_fold);
  EXPECT_TRUE(ScanWhole("GET / HTTP/1.1\r\n Host: a\r\n\r\n").obs_fold);
}

// A fold is found wherever the reads split the block, also between the LF and the SP.
TEST(ObsFoldTest, DetectsContinuationLinesSplitAcrossReads) {
  const std::string request = "PUT / HTTP/1.1\r\nX-A: a\r\n b\r\nHost: h\r\n\r\n";
  for (std::size_t at = 1; at < request.size(); ++at) {
    HeaderBlockScan scan;
    EXPECT_FALSE(FindHeaderBlockEnd(std::string_view(request).substr(0, at), &scan).has_value())
        << at;
    EXPECT_EQ(FindHeaderBlockEnd(request, &scan), request.size()) << at;
    EXPECT_TRUE(scan.obs_fold) << at;
  }
}

TEST(ObsFoldTest, AcceptsOrdinaryHeaders) {
  EXPECT_FALSE(ScanWhole("GET / HTTP/1.1\r\nHost: a\r\nX-A: b  c\t\r\n\r\n").obs_fold);
  EXPECT_FALSE(ScanWhole("GET / HTTP/1.1\r\n\r\n").obs_fold);
  // What follows the block (a body starting with a space) is not a line of it.
  EXPECT_FALSE(ScanWhole("PUT / HTTP/1.1\r\nContent-Length: 2\r\n\r\n x").obs_fold);
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
