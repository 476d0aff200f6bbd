#include "gateway/observability/process_metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>
#include <vector>

namespace fencegate::gateway {
namespace {

std::optional<std::string> ReadProcFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return std::move(content).str();
}

std::optional<double> ParseProcNumber(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str()) return std::nullopt;
  return value;
}

// The fields of /proc/<pid>/stat after the command name, which is in parentheses and may itself
// hold spaces and parentheses: the fields start after the last ')'. Index 0 is field 3 (state).
std::vector<std::string_view> ProcStatFields(std::string_view stat) {
  std::vector<std::string_view> fields;
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return fields;
  std::string_view rest = stat.substr(close + 1);
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::size_t end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  return fields;
}

// The value after `label` at the start of a line of `text` ("btime 1700000000").
std::optional<double> ProcLineValue(std::string_view text, std::string_view label) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, label.size()) == label) return ParseProcNumber(line.substr(label.size()));
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

ProcessSample ReadProcessSample(const std::string& process_dir, const std::string& stat_file,
                                double ticks_per_second, double page_size) {
  ProcessSample sample;
  if (const auto stat = ReadProcFile(process_dir + "/stat")) {
    // proc(5) numbers the fields from 1; fields[i] is field i + 3.
    const std::vector<std::string_view> fields = ProcStatFields(*stat);
    const auto field = [&](std::size_t number) -> std::optional<double> {
      if (number < 3 || number - 3 >= fields.size()) return std::nullopt;
      return ParseProcNumber(fields[number - 3]);
    };
    const auto utime = field(14), stime = field(15);
    if (utime && stime) sample.cpu_seconds = (*utime + *stime) / ticks_per_second;
    if (const auto vsize = field(23)) sample.virtual_bytes = *vsize;
    if (const auto rss = field(24)) sample.resident_bytes = *rss * page_size;
    const auto since_boot = field(22);
    const auto proc_stat = ReadProcFile(stat_file);
    const auto boot_time = proc_stat ? ProcLineValue(*proc_stat, "btime ") : std::nullopt;
    if (since_boot && boot_time) sample.start_time = *boot_time + *since_boot / ticks_per_second;
  }
  if (const auto limits = ReadProcFile(process_dir + "/limits")) {
    // "Max open files            1024                 524288               files": the soft limit.
    sample.max_fds = ProcLineValue(*limits, "Max open files");
  }
  std::error_code error;
  std::filesystem::directory_iterator fds(process_dir + "/fd", error);
  if (!error) {
    sample.open_fds = static_cast<double>(std::distance(begin(fds), end(fds)));
  }
  return sample;
}

ProcessMetrics::ProcessMetrics(prometheus::Registry& registry, std::string proc_root)
    : proc_root_(std::move(proc_root)),
      ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))),
      page_size_(static_cast<double>(sysconf(_SC_PAGESIZE))) {
  const auto gauge = [&registry](const char* name, const char* help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
  };
  cpu_seconds_ = &prometheus::BuildCounter()
                      .Name("process_cpu_seconds_total")
                      .Help("Total user and system CPU time spent in seconds.")
                      .Register(registry)
                      .Add({});
  resident_bytes_ = gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  virtual_bytes_ = gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  start_time_ =
      gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.");
  open_fds_ = gauge("process_open_fds", "Number of open file descriptors.");
  max_fds_ = gauge("process_max_fds", "Maximum number of open file descriptors.");
}

void ProcessMetrics::Refresh() {
  std::lock_guard lock(mu_);
  const ProcessSample sample =
      ReadProcessSample(proc_root_ + "/self", proc_root_ + "/stat", ticks_per_second_, page_size_);
  // A counter only rises: add what the process used since the previous scrape.
  if (sample.cpu_seconds && *sample.cpu_seconds > cpu_seconds_reported_) {
    cpu_seconds_->Increment(*sample.cpu_seconds - cpu_seconds_reported_);
    cpu_seconds_reported_ = *sample.cpu_seconds;
  }
  if (sample.resident_bytes) resident_bytes_->Set(*sample.resident_bytes);
  if (sample.virtual_bytes) virtual_bytes_->Set(*sample.virtual_bytes);
  if (sample.start_time) start_time_->Set(*sample.start_time);
  if (sample.open_fds) open_fds_->Set(*sample.open_fds);
  if (sample.max_fds) max_fds_->Set(*sample.max_fds);
}

}  // namespace fencegate::gateway
