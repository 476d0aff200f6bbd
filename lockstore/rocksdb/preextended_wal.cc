#include "lockstore/rocksdb/preextended_wal.h"

#include <fcntl.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <unistd.h>

#include <boost/crc.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>

namespace fencegate::lockstore {
namespace {

rocksdb::IOStatus ErrnoStatus(const std::string& context, int error) {
  if (error == ENOSPC || error == EDQUOT)
    return rocksdb::IOStatus::NoSpace(context, std::strerror(error));
  return rocksdb::IOStatus::IOError(context, std::strerror(error));
}

class PreextendedWalFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  // `fd`: a descriptor of the same file, for the zeros (RocksDB's writes go through its own
  // descriptor at its own offset; fdatasync on either syncs the file's pages).
  PreextendedWalFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::string name, int fd)
      : FSWritableFileOwnerWrapper(std::move(file)), name_(std::move(name)), fd_(fd) {}
  ~PreextendedWalFile() override { ::close(fd_); }

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    rocksdb::IOStatus s = ExtendFor(data.size());
    if (!s.ok()) return s;
    s = target()->Append(data, options, dbg);
    if (s.ok()) appended_ += data.size();
    return s;
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    rocksdb::IOStatus s = ExtendFor(data.size());
    if (!s.ok()) return s;
    s = target()->Append(data, options, info, dbg);
    if (s.ok()) appended_ += data.size();
    return s;
  }

 private:
  // Zeros rather than fallocate(): an allocated but unwritten block still needs a journal
  // commit when first written.
  rocksdb::IOStatus ExtendFor(std::size_t bytes) {
    static constexpr std::array<char, kWalExtensionBytes> kZeros{};
    while (appended_ + bytes > extended_) {
      std::size_t done = 0;
      while (done < kZeros.size()) {
        const ssize_t n = ::pwrite(fd_, kZeros.data() + done, kZeros.size() - done,
                                   static_cast<off_t>(extended_ + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return ErrnoStatus("extending " + name_, errno);
        done += static_cast<std::size_t>(n);
      }
      extended_ += kZeros.size();
    }
    return rocksdb::IOStatus::OK();
  }

  const std::string name_;
  const int fd_;
  // RocksDB appends from whichever thread leads a write group, one at a time, ordered by its
  // own write queue; the lock makes that order visible to this file (and to ThreadSanitizer,
  // which cannot see into the uninstrumented library), uncontended as it is.
  std::mutex mu_;
  std::uint64_t appended_ = 0;  // bytes RocksDB appended (its own file starts empty)
  std::uint64_t extended_ = 0;  // the file's size as far as the zeros reach
};

// Only write-ahead logs ("<number>.log") are extended: tables and the manifest are written
// once and synced rarely.
bool IsWriteAheadLog(std::string_view name) {
  const std::size_t slash = name.find_last_of('/');
  const std::string_view base = name.substr(slash == std::string::npos ? 0 : slash + 1);
  return base.size() > 4 && base.ends_with(".log") &&
         base.substr(0, base.size() - 4).find_first_not_of("0123456789") == std::string_view::npos;
}

// RocksDB's log format (db/log_format.h): 32 KiB blocks; each physical record has a 7-byte
// header, masked crc32c (of the type byte and the payload), length, type; a block's last 1-6
// bytes are zero padding when no header fits.
constexpr std::size_t kLogBlockBytes = 32768;
constexpr std::size_t kLogHeaderBytes = 7;
// A write cut short stops at a page (kill -9 between the pages of one write) or a sector
// (power loss) boundary; a cut anywhere else is damage, which RocksDB reports.
constexpr std::size_t kSectorBytes = 512;

// CRC-32C (Castagnoli), as RocksDB checksums a record: of its type byte, then its payload.
std::uint32_t RecordCrc(const unsigned char* type, const unsigned char* payload,
                        std::size_t length) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_byte(*type);
  crc.process_bytes(payload, length);
  return crc.checksum();
}

std::uint32_t UnmaskCrc(std::uint32_t masked) {
  const std::uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

// Where `log` must be cut so that a record torn before its zeros ends the file (npos: nowhere).
std::size_t TornRecordStart(const std::string& log) {
  const std::size_t last = log.find_last_not_of('\0');
  if (last == std::string::npos || last + 1 == log.size()) return std::string::npos;
  const auto* bytes = reinterpret_cast<const unsigned char*>(log.data());
  std::size_t at = 0;
  for (;;) {
    const std::size_t block_left = kLogBlockBytes - at % kLogBlockBytes;
    if (block_left < kLogHeaderBytes) {
      at += block_left;
      continue;
    }
    if (at > last) return std::string::npos;  // only zeros from here on: nothing torn
    if (at + kLogHeaderBytes > log.size()) return std::string::npos;  // cut at the end: RocksDB's
    const unsigned char* header = bytes + at;
    const std::size_t length = header[4] | (std::size_t{header[5]} << 8);
    const std::size_t end = at + kLogHeaderBytes + length;
    // A zero header amid the records or a record past its block: damage, RocksDB's to report.
    if ((length == 0 && header[6] == 0) || end > at + block_left || end > log.size()) {
      return std::string::npos;
    }
    const std::uint32_t stored = header[0] | (std::uint32_t{header[1]} << 8) |
                                 (std::uint32_t{header[2]} << 16) |
                                 (std::uint32_t{header[3]} << 24);
    const bool intact = UnmaskCrc(stored) == RecordCrc(header + 6, header + 7, length);
    if (end <= last) {
      if (!intact) return std::string::npos;  // damage before the end: RocksDB refuses it
      at = end;
      continue;
    }
    // The last record written. Torn: its checksum fails and it is zero from a sector boundary
    // on, where the write stopped.
    const std::size_t zeros_from = (last + kSectorBytes) / kSectorBytes * kSectorBytes;
    return !intact && zeros_from < end ? at : std::string::npos;
  }
}

class PreextendedWalFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  PreextendedWalFileSystem() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}
  const char* Name() const override { return "PreextendedWalFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& name, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->NewWritableFile(name, options, result, dbg);
    if (!s.ok() || !IsWriteAheadLog(name)) return s;
    const int fd = ::open(name.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      result->reset();
      return ErrnoStatus("opening " + name, error);
    }
    *result = std::make_unique<PreextendedWalFile>(std::move(*result), name, fd);
    return s;
  }
};

}  // namespace

rocksdb::Env* PreextendedWalEnv() {
  static rocksdb::Env* const env =
      rocksdb::NewCompositeEnv(std::make_shared<PreextendedWalFileSystem>()).release();
  return env;
}

Status CutTornWalRecords(const std::string& store_dir, const LogSink& log, bool* cut) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(store_dir, ec)) {
    const std::string path = entry.path().string();
    if (!IsWriteAheadLog(path)) continue;
    std::ifstream in(path, std::ios::binary);
    std::string contents(std::istreambuf_iterator<char>(in), {});
    if (in.bad()) return Status::IOError("cannot read " + path);
    const std::size_t torn = TornRecordStart(contents);
    if (torn == std::string::npos) continue;
    std::error_code resized;
    std::filesystem::resize_file(path, torn, resized);
    if (resized) {
      return Status::IOError("cannot cut the torn end of " + path + ": " + resized.message());
    }
    *cut = true;
    if (log) {
      log(LogSeverity::kWarning, "dropped a write cut short at the end of " + path + " (" +
                                     std::to_string(contents.size() - torn) +
                                     " bytes from offset " + std::to_string(torn) +
                                     "): kill -9 or power loss during a write nobody was told "
                                     "had succeeded");
    }
  }
  if (ec) return Status::IOError("cannot list " + store_dir + ": " + ec.message());
  return Status::Ok();
}

}  // namespace fencegate::lockstore
