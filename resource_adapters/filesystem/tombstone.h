#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace fencegate::adapters {

// Room for a token as stored (in a tombstone or a file's token record): any uint64 in decimal.
inline constexpr std::size_t kTokenTextMax = 24;

// A fenced DELETE leaves a tombstone: the token it was admitted with, kept in
// ".fencegate-tombstones/<name>" in the deleted file's directory. A later write of the name with
// a lower token is refused by the store itself, like a write over a file with a newer token,
// even when the gateway's fence store has lost the key (or another gateway with its own store
// shares the directory). The S3 and WebDAV adapters keep the same record in the backend.
// Clients never see tombstones: the directory has the reserved ".fencegate-" prefix, a GET of
// a deleted name is 404, and a write with a token at least the tombstone's replaces it.
inline constexpr char kTombstoneDirectory[] = ".fencegate-tombstones";

// The token of the tombstone of `name` in `directory_fd`; nullopt when there is none.
std::optional<std::uint64_t> ReadTombstone(int directory_fd, const std::string& name);

// Records `token` as the tombstone of `name`, durably when `sync`. Written in place: it is
// written before the file is unlinked, so a torn tombstone only ever sits beside the file whose
// own token still guards the name, and the next DELETE writes it again.
std::error_code WriteTombstone(int directory_fd, const std::string& name, std::uint64_t token,
                               bool sync);

// Removes the tombstone of `name` once a file carries the name again. Failing to is harmless:
// the file is found first, and its token is at least the tombstone's.
void ClearTombstone(int directory_fd, const std::string& name);

}  // namespace fencegate::adapters
