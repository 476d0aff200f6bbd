#include "lockstore/codec/record_codec.h"

#include <gtest/gtest.h>

namespace fencegate::lockstore {
namespace {

TEST(RecordCodecTest, FenceValueRoundTripsIn16BigEndianBytes) {
  const FenceRecord record{0x0102030405060708ull, -5};
  const EncodedFenceValue value = EncodeFenceValue(record);
  const std::string encoded(value.data(), value.size());
  ASSERT_EQ(encoded.size(), kFenceValueSize);
  EXPECT_EQ(encoded[0], '\x01');
  EXPECT_EQ(encoded[7], '\x08');
  FenceRecord decoded;
  ASSERT_TRUE(DecodeFenceValue(encoded, &decoded).ok());
  EXPECT_EQ(decoded.highest, record.highest);
  EXPECT_EQ(decoded.advanced_at_ms, record.advanced_at_ms);
  EXPECT_EQ(DecodeFenceValue(encoded.substr(1), &decoded).code(), Status::Code::kCorruption);
}

TEST(RecordCodecTest, SequenceKeysSortNumerically) {
  EXPECT_LT(EncodeSequenceKey(255), EncodeSequenceKey(256));
  EXPECT_LT(EncodeSequenceKey(1), EncodeSequenceKey(1ull << 40));
  std::uint64_t sequence = 0;
  ASSERT_TRUE(DecodeSequenceKey(EncodeSequenceKey(987654321), &sequence).ok());
  EXPECT_EQ(sequence, 987654321u);
}

TEST(RecordCodecTest, RejectionRoundTripsAndDetectsTruncation) {
  RejectionRecord record;
  record.at_ms = 1700000000123;
  record.route = "files";
  record.fence_key = "files:/a";
  record.method = "PUT";
  record.path = std::string(300, 'p');  // length needs a two-byte varint
  record.request_id = "req-1";
  record.reason = "stale_token";
  record.presented = 4;
  record.has_presented = true;
  record.highest = 9;
  const std::string encoded = EncodeRejectionValue(record);

  RejectionRecord decoded;
  ASSERT_TRUE(DecodeRejectionValue(encoded, &decoded).ok());
  EXPECT_EQ(decoded.at_ms, record.at_ms);
  EXPECT_EQ(decoded.route, record.route);
  EXPECT_EQ(decoded.fence_key, record.fence_key);
  EXPECT_EQ(decoded.method, record.method);
  EXPECT_EQ(decoded.path, record.path);
  EXPECT_EQ(decoded.request_id, record.request_id);
  EXPECT_EQ(decoded.reason, record.reason);
  EXPECT_EQ(decoded.presented, 4u);
  EXPECT_TRUE(decoded.has_presented);
  EXPECT_EQ(decoded.highest, 9u);

  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, encoded.size() - 1}) {
    EXPECT_EQ(DecodeRejectionValue(encoded.substr(0, cut), &decoded).code(),
              Status::Code::kCorruption)
        << "cut at " << cut;
  }
  EXPECT_EQ(DecodeRejectionValue(encoded + "x", &decoded).code(), Status::Code::kCorruption);
}

// A rejection record as gateways before trace ids wrote it (format 1), byte for byte.
std::string FormatOneRecord() {
  std::string out;
  out.push_back(1);
  const auto fixed64 = [&out](std::uint64_t value) {
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(value >> (8 * i)));
  };
  fixed64(1700000000123);
  fixed64(4);
  fixed64(9);
  out.push_back(1);
  for (const std::string_view s :
       {"files", "files:/a", "PUT", "/files/a", "req-1", "stale_token"}) {
    out.push_back(static_cast<char>(s.size()));
    out.append(s);
  }
  return out;
}

TEST(RecordCodecTest, OldRecordsWithoutTraceIdStillDecode) {
  RejectionRecord decoded;
  decoded.trace_id = "left over";
  ASSERT_TRUE(DecodeRejectionValue(FormatOneRecord(), &decoded).ok());
  EXPECT_EQ(decoded.at_ms, 1700000000123);
  EXPECT_EQ(decoded.request_id, "req-1");
  EXPECT_EQ(decoded.reason, "stale_token");
  EXPECT_EQ(decoded.highest, 9u);
  EXPECT_EQ(decoded.trace_id, "");
}

TEST(RecordCodecTest, RecordsWithoutTraceIdAreWrittenInTheOldFormat) {
  // So that a gateway that predates trace ids (a downgrade) still reads them.
  RejectionRecord record;
  record.at_ms = 1700000000123;
  record.route = "files";
  record.fence_key = "files:/a";
  record.method = "PUT";
  record.path = "/files/a";
  record.request_id = "req-1";
  record.reason = "stale_token";
  record.presented = 4;
  record.has_presented = true;
  record.highest = 9;
  EXPECT_EQ(EncodeRejectionValue(record), FormatOneRecord());
}

TEST(RecordCodecTest, TraceIdRoundTripsAndItsTruncationIsDetected) {
  RejectionRecord record;
  record.route = "files";
  record.request_id = "req-1";
  record.reason = "stale_token";
  record.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  const std::string encoded = EncodeRejectionValue(record);
  RejectionRecord decoded;
  ASSERT_TRUE(DecodeRejectionValue(encoded, &decoded).ok());
  EXPECT_EQ(decoded.trace_id, record.trace_id);
  EXPECT_EQ(decoded.reason, "stale_token");
  EXPECT_EQ(DecodeRejectionValue(encoded.substr(0, encoded.size() - 1), &decoded).code(),
            Status::Code::kCorruption);
  EXPECT_EQ(DecodeRejectionValue(encoded + "x", &decoded).code(), Status::Code::kCorruption);
  std::string unknown = encoded;
  unknown[0] = 4;
  EXPECT_EQ(DecodeRejectionValue(unknown, &decoded).code(), Status::Code::kCorruption);
}

// A rejection record as gateways before client addresses wrote it (format 2), byte for byte.
std::string FormatTwoRecord() {
  std::string out = FormatOneRecord();
  out[0] = 2;
  const std::string_view trace = "4bf92f3577b34da6a3ce929d0e0e4736";
  out.push_back(static_cast<char>(trace.size()));
  out.append(trace);
  return out;
}

TEST(RecordCodecTest, OldRecordsWithTraceIdButNoCallerStillDecode) {
  RejectionRecord decoded;
  decoded.client = "left over";
  decoded.principal = "left over";
  decoded.user_agent = "left over";
  ASSERT_TRUE(DecodeRejectionValue(FormatTwoRecord(), &decoded).ok());
  EXPECT_EQ(decoded.request_id, "req-1");
  EXPECT_EQ(decoded.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(decoded.client, "");
  EXPECT_EQ(decoded.principal, "");
  EXPECT_EQ(decoded.user_agent, "");
}

TEST(RecordCodecTest, RecordsWithTraceIdButNoCallerAreWrittenInFormatTwo) {
  RejectionRecord record;
  ASSERT_TRUE(DecodeRejectionValue(FormatTwoRecord(), &record).ok());
  EXPECT_EQ(EncodeRejectionValue(record), FormatTwoRecord());
}

TEST(RecordCodecTest, CallerFieldsRoundTripAndTheirTruncationIsDetected) {
  RejectionRecord record;
  record.route = "files";
  record.reason = "stale_token";
  record.client = "2001:db8::7";
  record.principal = "ci-deployer";
  record.user_agent = std::string(200, 'u');
  const std::string encoded = EncodeRejectionValue(record);
  EXPECT_EQ(encoded[0], 3);
  RejectionRecord decoded;
  ASSERT_TRUE(DecodeRejectionValue(encoded, &decoded).ok());
  EXPECT_EQ(decoded.client, record.client);
  EXPECT_EQ(decoded.principal, record.principal);
  EXPECT_EQ(decoded.user_agent, record.user_agent);
  EXPECT_EQ(decoded.trace_id, "");
  EXPECT_EQ(decoded.route, "files");
  for (std::size_t cut : {encoded.size() - 1, encoded.size() - 201, encoded.size() - 215}) {
    EXPECT_EQ(DecodeRejectionValue(encoded.substr(0, cut), &decoded).code(),
              Status::Code::kCorruption)
        << "cut at " << cut;
  }
  EXPECT_EQ(DecodeRejectionValue(encoded + "x", &decoded).code(), Status::Code::kCorruption);

  record.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  ASSERT_TRUE(DecodeRejectionValue(EncodeRejectionValue(record), &decoded).ok());
  EXPECT_EQ(decoded.trace_id, record.trace_id);
  EXPECT_EQ(decoded.principal, "ci-deployer");
}

}  // namespace
}  // namespace fencegate::lockstore
