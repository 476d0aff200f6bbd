#pragma once

#include <string>

namespace fencegate::integration {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction. The
// one temporary directory of the tests, unit and integration alike.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Join(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to Join(name) and returns that path.
  std::string WriteFile(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

// The whole content of a file; empty if it cannot be read.
std::string ReadWholeFile(const std::string& path);

}  // namespace fencegate::integration
