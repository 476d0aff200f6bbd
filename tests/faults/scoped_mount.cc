#include "tests/faults/scoped_mount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/support/process.h"

namespace fencegate::faults {
namespace {

// Runs a command to completion; false (with its stderr in `error`) unless it exits 0.
bool Run(const std::vector<std::string>& argv, std::string* error) {
  std::unique_ptr<integration::Process> process = integration::Process::Start(argv, error);
  if (!process) return false;
  std::optional<int> status = process->Wait(std::chrono::seconds(60));
  process->WaitForOutputEnd(std::chrono::seconds(5));
  if (status == 0) return true;
  *error = argv[0] + " exited with " + (status ? std::to_string(*status) : "nothing (hung)") +
           ": " + process->Stderr();
  return false;
}

// The device mounted on `dir`, from /proc/mounts; empty if none.
std::string MountedDevice(const std::string& dir) {
  std::ifstream mounts("/proc/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string device, mount_point;
    fields >> device >> mount_point;
    if (mount_point == dir) return device;
  }
  return {};
}

}  // namespace

std::unique_ptr<ScopedMount> ScopedMount::Tmpfs(const std::string& dir, std::size_t bytes,
                                                std::string* error) {
  const std::string options = "size=" + std::to_string(bytes);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    *error = "mount -t tmpfs on " + dir + ": " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<ScopedMount>(new ScopedMount(dir, ""));
}

std::unique_ptr<ScopedMount> ScopedMount::LoopExt4(const std::string& dir, const std::string& image,
                                                   std::size_t bytes, std::string* error) {
  {
    std::ofstream file(image, std::ios::binary | std::ios::trunc);
    if (!file) {
      *error = "cannot create " + image;
      return nullptr;
    }
  }
  if (::truncate(image.c_str(), static_cast<off_t>(bytes)) != 0) {
    *error = "truncate " + image + ": " + std::strerror(errno);
    return nullptr;
  }
  // No journal: on an error ext4 would abort the journal, and an aborted journal keeps the
  // file system read-only until it is unmounted.
  if (!Run({"/sbin/mkfs.ext4", "-q", "-F", "-O", "^has_journal", image}, error)) {
    return nullptr;
  }
  if (!Run({"/bin/mount", "-o", "loop,errors=remount-ro", image, dir}, error)) return nullptr;
  const std::string device = MountedDevice(dir);
  if (device.empty()) {
    *error = "mounted " + image + " but " + dir + " is not in /proc/mounts";
    ::umount2(dir.c_str(), MNT_DETACH);
    return nullptr;
  }
  return std::unique_ptr<ScopedMount>(new ScopedMount(dir, device));
}

ScopedMount::~ScopedMount() {
  // Lazily if something still holds it: a test must never leave a mount behind.
  if (::umount2(dir_.c_str(), 0) != 0) ::umount2(dir_.c_str(), MNT_DETACH);
}

bool ScopedMount::TriggerError(std::string* error) const {
  const std::string name = device_.substr(device_.rfind('/') + 1);
  const std::string control = "/sys/fs/ext4/" + name + "/trigger_fs_error";
  {
    std::ofstream trigger(control);
    trigger << "fencegate fault test: forcing read-only\n";
    if (!trigger.flush()) {
      *error = "cannot write " + control;
      return false;
    }
  }
  if (Writable(dir_)) {
    *error = "the kernel did not turn " + dir_ + " read-only after " + control;
    return false;
  }
  return true;
}

bool ScopedMount::RemountReadWrite(std::string* error) const {
  if (::mount(nullptr, dir_.c_str(), nullptr, MS_REMOUNT, nullptr) != 0) {
    *error = "remount rw " + dir_ + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

long long FillUp(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "open " + path + ": " + std::strerror(errno);
    return -1;
  }
  const std::vector<char> zeros(64 * 1024, 0);
  long long written = 0;
  std::size_t chunk = zeros.size();
  // Halve the chunk at ENOSPC so the last partial page is taken as well.
  while (chunk > 0) {
    const ssize_t n = ::write(fd, zeros.data(), chunk);
    if (n > 0) {
      written += n;
    } else if (n < 0 && errno == ENOSPC) {
      chunk /= 2;
    } else if (n < 0 && errno != EINTR) {
      *error = "write " + path + ": " + std::strerror(errno);
      ::close(fd);
      return -1;
    }
  }
  ::close(fd);
  return written;
}

bool Writable(const std::string& dir) {
  const std::string path = dir + "/.writable-probe";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "probe", 5) == 5 && ::fsync(fd) == 0;
  ::close(fd);
  ::unlink(path.c_str());
  return ok;
}

}  // namespace fencegate::faults
