#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace fencegate::gateway {

// What /proc says about one process (proc(5)); absent fields stay unset.
struct ProcessSample {
  std::optional<double> cpu_seconds;     // user + system time
  std::optional<double> resident_bytes;  // resident set size
  std::optional<double> virtual_bytes;   // virtual memory size
  std::optional<double> start_time;      // Unix seconds
  std::optional<double> open_fds;        // entries of fd/
  std::optional<double> max_fds;         // soft limit on open files
};

// Reads the sample of the process whose /proc directory is `process_dir` (/proc/self), with
// the boot time from `stat_file` (/proc/stat). `ticks_per_second` and `page_size` as sysconf
// gives them. Blocking file reads: for the admin thread, never a network thread.
ProcessSample ReadProcessSample(const std::string& process_dir, const std::string& stat_file,
                                double ticks_per_second, double page_size);

// The standard process metrics of the Prometheus client libraries, which prometheus-cpp does not
// ship, read from /proc when /metrics is scraped:
//   process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
//   process_open_fds, process_max_fds, process_start_time_seconds
class ProcessMetrics {
 public:
  // `proc_root`: where procfs is mounted; a test passes a directory of its own.
  explicit ProcessMetrics(prometheus::Registry& registry, std::string proc_root = "/proc");

  // Called by the admin thread before it renders the exposition.
  void Refresh();

 private:
  const std::string proc_root_;
  const double ticks_per_second_;
  const double page_size_;
  std::mutex mu_;                    // two scrapes at once
  double cpu_seconds_reported_ = 0;  // what process_cpu_seconds_total has been raised to
  prometheus::Counter* cpu_seconds_;
  prometheus::Gauge* resident_bytes_;
  prometheus::Gauge* virtual_bytes_;
  prometheus::Gauge* start_time_;
  prometheus::Gauge* open_fds_;
  prometheus::Gauge* max_fds_;
};

}  // namespace fencegate::gateway
