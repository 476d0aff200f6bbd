#include "resource_adapters/filesystem/temp_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <random>

namespace fencegate::adapters {
namespace {

constexpr std::size_t kSuffixDigits = 16;

std::string TempName() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  char suffix[kSuffixDigits + 1];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random()));
  return std::string(kTempPrefix) + suffix;
}

}  // namespace

bool IsTempName(std::string_view name) {
  if (!name.starts_with(kTempPrefix) || name.size() != kTempPrefix.size() + kSuffixDigits) {
    return false;
  }
  name.remove_prefix(kTempPrefix.size());
  return name.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::error_code CreateLockedTempFile(int directory_fd, LockedTempFile& out) {
  // Collisions of 64 random bits are unlikely, and a sweep takes a name away rarely: a few
  // attempts make both irrelevant.
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::string name = TempName();
    UniqueFd file(openat(directory_fd, name.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!file.valid()) {
      if (errno == EEXIST) continue;
      return LastError();
    }
    if (flock(file.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return LastError();
      continue;  // a sweep holds it, and removes it
    }
    struct stat st;
    if (fstat(file.get(), &st) != 0) return LastError();
    if (st.st_nlink == 0) continue;  // a sweep removed it before the lock was ours
    out.file = std::move(file);
    out.name = std::move(name);
    return {};
  }
  return std::make_error_code(std::errc::file_exists);
}

}  // namespace fencegate::adapters
