#include "lockstore/status.h"

namespace fencegate::lockstore {
namespace {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidArgument:
      return "Invalid argument";
    case Status::Code::kNotFound:
      return "Not found";
    case Status::Code::kIOError:
      return "IO error";
    case Status::Code::kUnavailable:
      return "Unavailable";
    case Status::Code::kCorruption:
      return "Corruption";
  }
  return "Unknown";
}

}  // namespace

std::string Status::ToString() const {
  std::string out = CodeName(code_);
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace fencegate::lockstore
