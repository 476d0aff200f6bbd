#include "base/log/event_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace fencegate::log {
namespace {

namespace json = boost::json;

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A file of its own under the test's temporary directory.
class EventLogFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("event_log_test." + std::to_string(::getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "events.log").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST(EventLogFormatTest, WritesTimeLevelMessageAndFieldsAsOneJsonLine) {
  std::string line;
  FormatEventLine(1764670620123, Level::kWarn, "backend connection failed",
                  {{"backend", "files"},
                   {"port", 8080},
                   {"suppressed", std::uint64_t{3}},
                   {"negative", -2},
                   {"ratio", 0.5},
                   {"tls", true}},
                  &line);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  // The fixed members come first, in this order, so that `grep`/`cut` users see them first.
  EXPECT_EQ(line.rfind("{\"time\":\"2025-12-02T10:17:00.123Z\",\"level\":\"warn\",\"msg\":", 0), 0u)
      << line;
  const json::object doc = json::parse(line).as_object();
  EXPECT_EQ(doc.at("msg").as_string(), "backend connection failed");
  EXPECT_EQ(doc.at("backend").as_string(), "files");
  EXPECT_EQ(doc.at("port").as_int64(), 8080);
  EXPECT_EQ(doc.at("suppressed").to_number<std::uint64_t>(), 3u);
  EXPECT_EQ(doc.at("negative").as_int64(), -2);
  EXPECT_DOUBLE_EQ(doc.at("ratio").as_double(), 0.5);
  EXPECT_TRUE(doc.at("tls").as_bool());
}

TEST(EventLogFormatTest, EscapesHostileTextSoEachEventStaysOneLine) {
  const std::string hostile = "a\"}\n{\"level\":\"error\"\\\x01\t";
  std::string line;
  FormatEventLine(0, Level::kError, hostile, {{"path", hostile}}, &line);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const json::object doc = json::parse(line).as_object();
  EXPECT_EQ(doc.at("level").as_string(), "error");
  EXPECT_EQ(doc.at("msg").as_string(), hostile);
  EXPECT_EQ(doc.at("path").as_string(), hostile);
  EXPECT_EQ(doc.size(), 4u);
}

TEST(EventLogFormatTest, NonFiniteNumbersAreNull) {
  std::string line;
  FormatEventLine(0, Level::kInfo, "m", {{"x", 1.0 / 0.0}}, &line);
  EXPECT_TRUE(json::parse(line).as_object().at("x").is_null());
}

TEST(EventLogLevelTest, ParsesTheThreeNames) {
  Level level = Level::kInfo;
  ASSERT_TRUE(ParseLevel("error", &level));
  EXPECT_EQ(level, Level::kError);
  ASSERT_TRUE(ParseLevel("warn", &level));
  EXPECT_EQ(level, Level::kWarn);
  ASSERT_TRUE(ParseLevel("info", &level));
  EXPECT_EQ(level, Level::kInfo);
  EXPECT_FALSE(ParseLevel("debug", &level));
  EXPECT_FALSE(ParseLevel("INFO", &level));
}

TEST_F(EventLogFileTest, LevelFilterDropsLessSevereEvents) {
  EventLog log(STDERR_FILENO, Level::kWarn);
  std::string error;
  ASSERT_TRUE(log.Open(path_, &error)) << error;
  log.Info("hidden");
  log.Warn("shown warn");
  log.Error("shown error");
  log.set_level(Level::kError);
  log.Warn("hidden too");
  const std::vector<std::string> lines = ReadLines(path_);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(json::parse(lines[0]).as_object().at("msg").as_string(), "shown warn");
  EXPECT_EQ(json::parse(lines[1]).as_object().at("level").as_string(), "error");
}

TEST_F(EventLogFileTest, ConcurrentEventsNeverInterleave) {
  EventLog log(STDERR_FILENO);
  std::string error;
  ASSERT_TRUE(log.Open(path_, &error)) << error;
  constexpr int kThreads = 8;
  constexpr int kLines = 500;
  // Long enough that a line split into several writes would show.
  const std::string padding(1500, 'x');
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLines; ++i) log.Info(padding, {{"thread", t}, {"i", i}});
    });
  }
  for (auto& thread : threads) thread.join();
  const std::vector<std::string> lines = ReadLines(path_);
  ASSERT_EQ(lines.size(), std::size_t{kThreads * kLines});
  std::map<std::int64_t, int> next;
  for (const std::string& line : lines) {
    const json::object doc = json::parse(line).as_object();  // throws on a torn line
    EXPECT_EQ(doc.at("msg").as_string(), padding);
    const std::int64_t thread = doc.at("thread").as_int64();
    EXPECT_EQ(doc.at("i").as_int64(), next[thread]++) << "lines of one thread out of order";
  }
}

TEST_F(EventLogFileTest, ReopenStartsTheRenamedFileAfresh) {
  EventLog log(STDERR_FILENO);
  std::string error;
  ASSERT_TRUE(log.Open(path_, &error)) << error;
  log.Info("before");
  const std::string rotated = path_ + ".1";
  std::filesystem::rename(path_, rotated);
  log.Info("still to the renamed file");
  ASSERT_TRUE(log.Reopen(&error)) << error;
  log.Info("after");
  const std::vector<std::string> old_lines = ReadLines(rotated);
  const std::vector<std::string> new_lines = ReadLines(path_);
  ASSERT_EQ(old_lines.size(), 2u);
  ASSERT_EQ(new_lines.size(), 1u);
  EXPECT_EQ(json::parse(new_lines[0]).as_object().at("msg").as_string(), "after");
}

TEST_F(EventLogFileTest, AnUnopenableFileKeepsTheCurrentDestination) {
  EventLog log(STDERR_FILENO);
  std::string error;
  ASSERT_TRUE(log.Open(path_, &error)) << error;
  EXPECT_FALSE(log.Open((dir_ / "missing" / "events.log").string(), &error));
  EXPECT_NE(error.find("missing"), std::string::npos) << error;
  // Reopen still means the first file: a failed Open changed nothing.
  log.Info("kept");
  ASSERT_EQ(ReadLines(path_).size(), 1u);
}

TEST(EventLogTest, WritesToTheDescriptorItWasGiven) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    EventLog log(fds[1]);
    log.Error("to the pipe", {{"n", 1}});
  }
  ::close(fds[1]);
  char buffer[512];
  const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
  ::close(fds[0]);
  ASSERT_GT(n, 0);
  const json::object doc = json::parse(std::string_view(buffer, n)).as_object();
  EXPECT_EQ(doc.at("msg").as_string(), "to the pipe");
  EXPECT_EQ(doc.at("n").as_int64(), 1);
}

}  // namespace
}  // namespace fencegate::log
