#include "resource_adapters/filesystem/resource_path.h"

#include <gtest/gtest.h>

namespace fencegate::adapters {
namespace {

unsigned RefusalStatus(std::string_view target, std::string_view prefix = "/files/") {
  auto mapped = MapTargetToPath(target, prefix);
  auto* problem = std::get_if<Problem>(&mapped);
  return problem ? problem->status : 0;
}

ResourcePath Mapped(std::string_view target, std::string_view prefix = "/files/") {
  auto mapped = MapTargetToPath(target, prefix);
  EXPECT_TRUE(std::holds_alternative<ResourcePath>(mapped)) << target;
  return std::holds_alternative<ResourcePath>(mapped) ? std::get<ResourcePath>(mapped)
                                                      : ResourcePath{};
}

TEST(ResourcePathTest, MapsDecodedSegmentsAndDropsTheQuery) {
  ResourcePath path = Mapped("/files/a%20b/c/d.txt?version=2#frag");
  EXPECT_EQ(path.directories, (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(path.name, "d.txt");
  EXPECT_EQ(path.RelativePath(), "a b/c/d.txt");
}

TEST(ResourcePathTest, DirectoryTargetsHaveNoName) {
  EXPECT_EQ(Mapped("/files/a/").name, "");
  EXPECT_EQ(Mapped("/files/a/").directories, (std::vector<std::string>{"a"}));
  EXPECT_EQ(Mapped("/files/").name, "");
  EXPECT_EQ(Mapped("/files").name, "");
}

TEST(ResourcePathTest, PrefixWithoutTrailingSlash) {
  EXPECT_EQ(Mapped("/files/x", "/files").name, "x");
  EXPECT_EQ(RefusalStatus("/filesystem", "/files"), 400u);
}

TEST(ResourcePathTest, RefusesEscapesAndMalformedPaths) {
  const std::pair<std::string_view, unsigned> cases[] = {
      {"/files/..", 403},
      {"/files/a/../b", 403},
      {"/files/.", 403},
      {"/files/%2e%2e", 403},
      {"/files/%2E%2e/", 403},
      {"/files/%2e", 403},
      {"/files/a/%2f..", 403},
      {"/files/a%2Fb", 403},
      {"/files/a%5cb", 403},
      {"/files//etc/passwd", 403},
      {"/files/.fencegate-meta.x", 403},
      {"/files/a%00", 400},
      {"/files/a%0", 400},
      {"/files/a%g0", 400},
      {"/files/a//b", 400},
      {"/other/x", 400},
  };
  for (const auto& [target, status] : cases) {
    EXPECT_EQ(RefusalStatus(target), status) << target;
  }
}

TEST(ResourcePathTest, RefusesOverlongNames) {
  EXPECT_EQ(RefusalStatus("/files/" + std::string(300, 'a')), 414u);
  EXPECT_EQ(RefusalStatus("/files/" + std::string(255, 'a')), 0u);
}

}  // namespace
}  // namespace fencegate::adapters
