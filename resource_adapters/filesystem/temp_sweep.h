#pragma once

#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <string>

namespace fencegate::adapters {

// What a sweep of a store's root found.
struct TempSweepResult {
  std::size_t removed = 0;          // temp files of writes that were cut (kill -9, crash)
  std::uint64_t removed_bytes = 0;  // their size
  std::size_t in_use = 0;           // locked by a write still running: left alone
  std::size_t errors = 0;           // directories or files that could not be examined
  std::string first_error;
};

// Removes the temp files (temp_file.h) under `root_fd`, at any depth, that no running write
// holds: the lock tells a live write, of this process or another sharing the root, from a cut
// one, so the sweep may run while writes go on. Symbolic links are never followed. Blocks on
// the disk for as long as the tree takes to list: run it on a thread of its own. Returns early
// when `stop` is requested.
TempSweepResult RemoveAbandonedTempFiles(int root_fd, const std::stop_token& stop);

}  // namespace fencegate::adapters
