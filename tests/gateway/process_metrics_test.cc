#include "gateway/observability/process_metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <prometheus/text_serializer.h>

#include "tests/support/temp_dir.h"

namespace fencegate::gateway {
namespace {

using integration::TempDir;

// A /proc of its own: a process whose command name holds spaces and a ')', 150 + 50 ticks of
// CPU, started 1000 ticks after a boot at Unix second 1700000000, 4096 pages resident, three
// open descriptors, a soft limit of 1024 open files.
void WriteFakeProc(const TempDir& dir) {
  std::filesystem::create_directories(dir.Join("self/fd"));
  for (const char* fd : {"0", "1", "2"}) dir.WriteFile(std::string("self/fd/") + fd, "");
  dir.WriteFile(
      "self/stat",
      "4242 (fence gate) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 4 0 "
      "1000 123456789 4096 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
  dir.WriteFile("self/limits",
                "Limit                     Soft Limit           Hard Limit           Units\n"
                "Max cpu time              unlimited            unlimited            seconds\n"
                "Max open files            1024                 524288               files\n");
  dir.WriteFile("stat", "cpu  1 2 3 4\nintr 5\nbtime 1700000000\nprocesses 9\n");
}

TEST(ProcessMetricsTest, ReadsEachFieldFromProc) {
  TempDir dir;
  WriteFakeProc(dir);
  const ProcessSample sample = ReadProcessSample(dir.Join("self"), dir.Join("stat"), 100, 4096);
  EXPECT_EQ(sample.cpu_seconds, 2.0);
  EXPECT_EQ(sample.virtual_bytes, 123456789.0);
  EXPECT_EQ(sample.resident_bytes, 4096.0 * 4096);
  EXPECT_EQ(sample.start_time, 1700000010.0);
  EXPECT_EQ(sample.open_fds, 3.0);
  EXPECT_EQ(sample.max_fds, 1024.0);
}

TEST(ProcessMetricsTest, LeavesOutWhatIsMissing) {
  TempDir dir;
  const ProcessSample sample = ReadProcessSample(dir.Join("self"), dir.Join("stat"), 100, 4096);
  EXPECT_FALSE(sample.cpu_seconds.has_value());
  EXPECT_FALSE(sample.start_time.has_value());
  EXPECT_FALSE(sample.open_fds.has_value());
  EXPECT_FALSE(sample.max_fds.has_value());
}

TEST(ProcessMetricsTest, ReadsThisProcess) {
  const ProcessSample sample =
      ReadProcessSample("/proc/self", "/proc/stat", static_cast<double>(sysconf(_SC_CLK_TCK)),
                        static_cast<double>(sysconf(_SC_PAGESIZE)));
  ASSERT_TRUE(sample.resident_bytes.has_value());
  EXPECT_GT(*sample.resident_bytes, 0);
  ASSERT_TRUE(sample.virtual_bytes.has_value());
  EXPECT_GE(*sample.virtual_bytes, *sample.resident_bytes);
  ASSERT_TRUE(sample.open_fds.has_value());
  EXPECT_GE(*sample.open_fds, 3);  // stdin, stdout, stderr
  ASSERT_TRUE(sample.max_fds.has_value());
  EXPECT_GE(*sample.max_fds, *sample.open_fds);
  ASSERT_TRUE(sample.start_time.has_value());
  EXPECT_LE(*sample.start_time, static_cast<double>(time(nullptr)) + 1);
  EXPECT_GT(*sample.start_time, 1.6e9);
  ASSERT_TRUE(sample.cpu_seconds.has_value());
  EXPECT_GE(*sample.cpu_seconds, 0);
}

TEST(ProcessMetricsTest, ExportsTheStandardNamesAtRefresh) {
  TempDir dir;
  WriteFakeProc(dir);
  prometheus::Registry registry;
  ProcessMetrics metrics(registry, dir.path());
  metrics.Refresh();
  metrics.Refresh();  // the CPU counter is raised by what was used since, not added again
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << text;
  EXPECT_NE(text.find("process_open_fds 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("process_max_fds 1024\n"), std::string::npos) << text;
  EXPECT_NE(text.find("process_virtual_memory_bytes 123456789\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE process_resident_memory_bytes gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE process_start_time_seconds gauge"), std::string::npos);
  // 200 ticks at the sysconf rate, once.
  const std::string cpu_line = "process_cpu_seconds_total ";
  const std::size_t at = text.find("\n" + cpu_line);
  ASSERT_NE(at, std::string::npos);
  EXPECT_DOUBLE_EQ(std::stod(text.substr(at + 1 + cpu_line.size())), 200 / ticks);
}

}  // namespace
}  // namespace fencegate::gateway
