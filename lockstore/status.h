#pragma once

#include <string>
#include <utility>

namespace fencegate::lockstore {

// The result of an operation at the lockstore boundary. Errors are values here;
// nothing in lockstore/ throws across its interface. [[nodiscard]], as RocksDB's Status: a
// caller either looks at it or says with IgnoreError() why it need not.
class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,  // the caller asked for something malformed
    kNotFound,         // no such key or record
    kIOError,          // the storage medium failed (disk full, read-only, fsync error)
    kUnavailable,      // the store is closed or not reachable (shutting down, no quorum)
    kCorruption,       // stored data did not decode
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status IOError(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Drops the status on purpose. Every call carries a comment saying why nothing is lost.
  void IgnoreError() const {}

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace fencegate::lockstore
