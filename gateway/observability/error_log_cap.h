#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fencegate::gateway {

// Caps the access-log lines of failed requests (status 400 and above) per client and fence
// key, as nginx's limit_req logging does: the first `lines_per_second` of a (client, key) in
// each wall-clock second are logged, the rest are counted and the count is reported in the next
// line logged for that (client, key). A client flooding one key with stale writes then costs a
// few lines a second instead of one per refusal.
//
// Memory is a fixed table of kSlots entries, each holding one (client, key) by hash: a pair that
// lands on a slot held by another takes it over, and the count of lines it held back is then
// never reported in a line (it is still in fencegate_access_log_suppressed_total). Not
// synchronised: one per network thread, so the cap applies per thread.
class ErrorLogCap {
 public:
  static constexpr std::size_t kSlots = 4096;

  // lines_per_second 0: every line is logged.
  explicit ErrorLogCap(unsigned lines_per_second);

  struct Verdict {
    bool log = true;
    // When `log`: lines of this (client, key) held back since its previous logged line.
    std::uint64_t suppressed = 0;
  };
  // `second`: the request's arrival, in Unix seconds.
  Verdict Admit(std::string_view client, std::string_view fence_key, std::int64_t second);

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::int64_t second = 0;
    unsigned logged = 0;  // lines logged in `second`
    std::uint64_t suppressed = 0;
  };

  const unsigned lines_per_second_;
  std::vector<Slot> slots_;
};

}  // namespace fencegate::gateway
