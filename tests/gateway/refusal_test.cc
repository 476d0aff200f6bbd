#include "gateway/http/refusal.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fencegate::gateway {
namespace {

TEST(RefusalTableTest, EveryRefusalHasItsOwnRow) {
  const auto table = RefusalTable();
  ASSERT_EQ(table.size(), static_cast<std::size_t>(Refusal::kConfigInvalid) + 1);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].refusal), i) << table[i].slug;
    EXPECT_EQ(&RefusalText(static_cast<Refusal>(i)), &table[i]);
  }
}

TEST(RefusalTableTest, SlugsAreUniqueAndRowsComplete) {
  std::set<std::string_view> slugs;
  for (const RefusalRow& row : RefusalTable()) {
    EXPECT_TRUE(slugs.insert(row.slug).second) << "slug twice: " << row.slug;
    EXPECT_GE(row.status, 400u) << row.slug;
    EXPECT_LT(row.status, 600u) << row.slug;
    EXPECT_TRUE(std::regex_match(std::string(row.slug), std::regex("[a-z0-9]+(-[a-z0-9]+)*")))
        << row.slug;
    EXPECT_FALSE(row.title.empty()) << row.slug;
    EXPECT_FALSE(row.detail.empty()) << row.slug;
    // Rendered into docs/REFUSALS.md's table cells.
    EXPECT_EQ(row.title.find('|'), std::string_view::npos) << row.slug;
    EXPECT_EQ(row.detail.find('|'), std::string_view::npos) << row.slug;
  }
}

TEST(RefusalTableTest, ProblemTakesTheRowAndASiteDetail) {
  const ProblemDetails usual = RefusalProblem(Refusal::kHeaderTooLarge);
  EXPECT_EQ(usual.status, 431u);
  EXPECT_EQ(usual.slug, "request-header-too-large");
  EXPECT_EQ(usual.title, "Request header fields too large");
  EXPECT_EQ(usual.detail, "the request header block exceeds limits.max_header_bytes");

  const ProblemDetails specific = RefusalProblem(Refusal::kBodyTooLarge, "at most 4096 bytes");
  EXPECT_EQ(specific.status, 413u);
  EXPECT_EQ(specific.slug, "request-body-too-large");
  EXPECT_EQ(specific.detail, "at most 4096 bytes");
}

// A status/slug pair written in a docs table: the file and line it is on.
struct DocPair {
  std::string where;
  std::string slug;
  unsigned status;
};

// Table rows of README.md and docs/*.md that name one of the table's slugs in backticks next to
// an HTTP status. A row may name several refusals ("400 `bad-path` or 414 `path-too-long`"),
// so each slug is paired with the status written nearest before it, else nearest after it.
std::vector<DocPair> DocumentedPairs() {
  const std::filesystem::path root = FENCEGATE_SOURCE_DIR;
  std::vector<std::filesystem::path> files = {root / "README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(root / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::set<std::string, std::less<>> slugs;
  for (const RefusalRow& row : RefusalTable()) slugs.emplace(row.slug);

  const std::regex slug_pattern("`([a-z0-9]+(?:-[a-z0-9]+)+)`");
  const std::regex status_pattern("(?:^|[^0-9A-Za-z._/-])([45][0-9][0-9])(?![0-9A-Za-z_])");
  std::vector<DocPair> pairs;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      if (!line.starts_with('|')) continue;
      std::vector<std::pair<std::size_t, unsigned>> statuses;
      for (std::sregex_iterator it(line.begin(), line.end(), status_pattern), end; it != end;
           ++it) {
        statuses.emplace_back(it->position(1), std::stoul((*it)[1]));
      }
      if (statuses.empty()) continue;
      for (std::sregex_iterator it(line.begin(), line.end(), slug_pattern), end; it != end; ++it) {
        const std::string slug = (*it)[1];
        if (!slugs.contains(slug)) continue;  // an adapter's problem, a config value, ...
        const std::size_t at = it->position(0);
        const std::pair<std::size_t, unsigned>* nearest = nullptr;
        for (const auto& status : statuses) {
          if (status.first < at) nearest = &status;
        }
        if (nearest == nullptr) nearest = &statuses.front();
        pairs.push_back(
            {file.filename().string() + ":" + std::to_string(number), slug, nearest->second});
      }
    }
  }
  return pairs;
}

TEST(RefusalDocsTest, DocsTablesMatchTheRefusalTable) {
  std::map<std::string_view, unsigned> status_of;
  for (const RefusalRow& row : RefusalTable()) status_of[row.slug] = row.status;
  const std::vector<DocPair> pairs = DocumentedPairs();
  // The docs name refusals in tables (docs/BAD_INPUT.md at least): finding none means the
  // scan broke, not that the docs agree.
  EXPECT_FALSE(pairs.empty());
  for (const DocPair& pair : pairs) {
    EXPECT_EQ(pair.status, status_of.at(pair.slug))
        << pair.where << ": `" << pair.slug << "` is written with " << pair.status;
  }
}

// docs/REFUSALS.md is the table, rendered: regenerate it with
//   FENCEGATE_WRITE_REFUSALS_DOC=1 build/tests/gateway/gateway_test
//   --gtest_filter='RefusalDocsTest.*'
std::string RenderedRefusalsDoc() {
  std::string out =
      "# Refusals\n\n"
      "Every problem+json refusal of the gateway itself (proxy, lock API, admin API), from its\n"
      "one table in `gateway/http/refusal.cc`. The type of each is\n"
      "`https://fencegate.dev/problems/<slug>`; a refusing site may send a more specific\n"
      "detail than the one here. Adapters add their own problems (see BAD_INPUT.md).\n"
      "Generated by `tests/gateway/refusal_test.cc`, which fails when this file and the\n"
      "table differ.\n\n"
      "Refusals of fenced writes add `reason` (the audit trail's), `fence_key`,\n"
      "`presented_token` and, where the route's `disclose_highest_token` allows it\n"
      "(SECURITY.md \"What a refusal discloses\"), `highest_token`. A `stale-token` refusal\n"
      "adds `stale_reason`: `superseded`, `lease-expired`, `force-released` (with `audit_id`,\n"
      "the lock-audit record's sequence) or `released` (LOCKS_AND_TOKENS.md \"Why a token is\n"
      "stale\").\n\n"
      "| Status | Slug | Title | Detail |\n"
      "|---|---|---|---|\n";
  for (const RefusalRow& row : RefusalTable()) {
    out += "| " + std::to_string(row.status) + " | `" + std::string(row.slug) + "` | " +
           std::string(row.title) + " | " + std::string(row.detail) + " |\n";
  }
  return out;
}

TEST(RefusalDocsTest, RefusalsDocIsTheTable) {
  const std::filesystem::path path =
      std::filesystem::path(FENCEGATE_SOURCE_DIR) / "docs" / "REFUSALS.md";
  const std::string expected = RenderedRefusalsDoc();
  if (std::getenv("FENCEGATE_WRITE_REFUSALS_DOC") != nullptr) {
    std::ofstream(path) << expected;
  }
  std::ifstream in(path);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(written.str(), expected) << "regenerate docs/REFUSALS.md (see above)";
}

}  // namespace
}  // namespace fencegate::gateway
