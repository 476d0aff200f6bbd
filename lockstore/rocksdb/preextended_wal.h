#pragma once

#include <cstdint>
#include <string>

#include "lockstore/log_sink.h"
#include "lockstore/status.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace fencegate::lockstore {

// The Env the fence store opens RocksDB with: the default one, except that each write-ahead log
// file is extended with zeros ahead of the records appended to it (kWalExtensionBytes at a time).
//
// Why: a synced advance is one small append to the log and one fdatasync. An append that grows
// the file changes its size, and RocksDB's own preallocation (fallocate with KEEP_SIZE) leaves
// the blocks unwritten, so every fdatasync also had to commit the file system's journal, which
// carries whatever metadata any process on that file system changed meanwhile. Appending into
// blocks already written and inside the file's size, the fdatasync writes the data block and
// nothing else: a lone advance's synced write takes what an overwrite of a preallocated file
// takes (docs/PERFORMANCE.md, "One connection advancing one key").
//
// Recovery: RocksDB's log reader skips a zero-filled tail silently in every recovery mode (it is
// what its old mmap writer left), so a log left extended by kill -9 or power loss replays to its
// last record; a clean close truncates it to its records (RocksDB trims what it preallocated).
// A write cut short, though (kill -9 between the pages of one write, power loss between
// sectors), leaves a record followed by zeros instead of the end of the file, which RocksDB
// reads as damage rather than a torn end: CutTornWalRecords() cuts it off before the store
// opens. A full disk fails the extension with NoSpace, before the record is written.
//
// One extension per ~1,500 advances (an advance's log record is ~45 bytes), each one zeroed
// block write and one journal commit at the next sync. Small enough that a disk found full at
// an extension leaves little room written ahead unused.
constexpr std::uint64_t kWalExtensionBytes = 64u << 10;

// Never destroyed, like rocksdb::Env::Default(): stores may be closed at any time, static
// destruction included.
rocksdb::Env* PreextendedWalEnv();

// For a store RocksDB refused as damaged (and so holds no lock on): in each write-ahead log
// left extended, a last record
// whose checksum fails and whose bytes are zero from a sector boundary on (a write cut short,
// never acknowledged: the store answers only after the sync) is cut off with the zeros after
// it, so that RocksDB, opening it again, drops it as the torn end it is
// (kTolerateCorruptedTailRecords). Anything else is left for RocksDB to judge: damage before the
// last record still refuses the open. Sets `*cut` if it cut anything and says so on `log`.
Status CutTornWalRecords(const std::string& store_dir, const LogSink& log, bool* cut);

}  // namespace fencegate::lockstore
