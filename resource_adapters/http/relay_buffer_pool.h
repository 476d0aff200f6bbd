#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace fencegate::adapters {

// Relay buffers of one network thread, reused from exchange to exchange (no locking). A fresh
// buffer per exchange costs either a zero-fill of the whole buffer (std::vector) or, for an
// uninitialised one, a malloc/free pair of a large block that glibc may give back to the
// kernel each time; both dwarf the rest of a small proxied request.
//
// How many are kept follows demand: as many as were in use at once lately, so that buffers
// freed after a burst are the burst's excess only. A group commit hands its whole round of
// exchanges to the network thread at once; with a fixed small cap every round freed its excess,
// glibc returned the top of the heap to the kernel (madvise) and the next round faulted the
// pages in again, about 8% of the gateway's CPU at 64 connections of token advances.
class RelayBufferPool {
 public:
  using Buffer = std::unique_ptr<char[]>;

  // buffer_bytes: the size of every buffer (at least 1). max_idle: the most buffers ever kept
  // for reuse, whatever the recent demand.
  RelayBufferPool(std::size_t buffer_bytes, std::size_t max_idle);

  // A buffer of buffer_bytes() bytes, with unspecified contents.
  Buffer Take();
  // Takes back a buffer from Take() (null: nothing). Keeps buffers while those in use plus
  // those kept stay within the recent peak of buffers in use at once, freeing the rest.
  void Give(Buffer buffer);

  std::size_t buffer_bytes() const { return buffer_bytes_; }
  std::size_t idle() const { return idle_.size(); }

  // "Lately": the current and the previous window of this many Take() calls. Counted in takes
  // rather than time: no clock read per exchange, and an idle gateway keeps what its last
  // traffic needed.
  static constexpr std::size_t kWindowTakes = 1024;

 private:
  const std::size_t buffer_bytes_;
  const std::size_t max_idle_;
  std::vector<Buffer> idle_;
  std::size_t in_use_ = 0;
  std::size_t window_peak_ = 0;    // most in use at once in the current window
  std::size_t previous_peak_ = 0;  // the same in the previous window
  std::size_t window_takes_ = 0;
};

}  // namespace fencegate::adapters
