#include "lockstore/rocksdb/preextended_wal.h"

#include <gtest/gtest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/temp_dir.h"

namespace fencegate::lockstore {
namespace {

using integration::ReadWholeFile;
using integration::TempDir;

std::unique_ptr<rocksdb::FSWritableFile> Create(const std::string& path) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  const rocksdb::IOStatus s = PreextendedWalEnv()->GetFileSystem()->NewWritableFile(
      path, rocksdb::FileOptions(), &file, nullptr);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return file;
}

// As RocksDB's file writer appends: preallocating first (which a clean close trims again).
void Append(rocksdb::FSWritableFile& file, const std::string& data) {
  file.SetPreallocationBlockSize(1u << 20);
  file.PrepareWrite(file.GetFileSize(rocksdb::IOOptions(), nullptr), data.size(),
                    rocksdb::IOOptions(), nullptr);
  ASSERT_TRUE(file.Append(data, rocksdb::IOOptions(), nullptr).ok());
  ASSERT_TRUE(file.Flush(rocksdb::IOOptions(), nullptr).ok());
}

TEST(PreextendedWalTest, ALogIsWrittenIntoZerosAheadOfItsRecords) {
  TempDir dir;
  const std::string path = dir.Join("000007.log");
  auto file = Create(path);
  Append(*file, "first record");
  // The file reaches past the record with zeros: the next appends change no size.
  const auto extended = std::filesystem::file_size(path);
  EXPECT_GE(extended, kWalExtensionBytes);
  std::string contents = ReadWholeFile(path);
  EXPECT_EQ(contents.substr(0, 12), "first record");
  EXPECT_EQ(contents.find_first_not_of('\0', 12), std::string::npos);

  // Records beyond the zeros written so far extend the file again.
  const std::string big(extended, 'x');
  Append(*file, big);
  EXPECT_GT(std::filesystem::file_size(path), 12 + big.size());
  contents = ReadWholeFile(path);
  EXPECT_EQ(contents.substr(12, big.size()), big);
  EXPECT_EQ(contents.find_first_not_of('\0', 12 + big.size()), std::string::npos);

  // A clean close leaves just the records (RocksDB trims what it preallocated).
  ASSERT_TRUE(file->Close(rocksdb::IOOptions(), nullptr).ok());
  EXPECT_EQ(std::filesystem::file_size(path), 12 + big.size());
}

TEST(PreextendedWalTest, OtherFilesGrowWithTheirContents) {
  TempDir dir;
  for (const std::string name : {"MANIFEST-000005", "000009.sst", "LOG", "x.log"}) {
    auto file = Create(dir.Join(name));
    Append(*file, "contents");
    EXPECT_EQ(std::filesystem::file_size(dir.Join(name)), 8u) << name;
  }
}

}  // namespace
}  // namespace fencegate::lockstore
