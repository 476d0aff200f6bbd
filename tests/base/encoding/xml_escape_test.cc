#include "base/encoding/xml_escape.h"

#include <gtest/gtest.h>

namespace fencegate::encoding {
namespace {

TEST(XmlEscapeTest, EscapesTheFiveMarkupCharacters) {
  std::string out = "<Key>";
  AppendXmlEscaped("a<b&c\"d'e>f", &out);
  EXPECT_EQ(out, "<Key>a&lt;b&amp;c&quot;d&apos;e&gt;f");
}

TEST(XmlEscapeTest, PassesOtherBytesAsTheyAre) {
  std::string out;
  AppendXmlEscaped("plain/path \xe2\x82\xac;#%", &out);
  EXPECT_EQ(out, "plain/path \xe2\x82\xac;#%");
  out.clear();
  AppendXmlEscaped("&amp;", &out);  // escaped again: the text is data, not markup
  EXPECT_EQ(out, "&amp;amp;");
}

}  // namespace
}  // namespace fencegate::encoding
