#include "base/encoding/xml_tree.h"

#include <string>

#include <gtest/gtest.h>

namespace fencegate::encoding {
namespace {

TEST(XmlTreeTest, ResolvesNamespacesWhateverThePrefix) {
  const auto root = ParseXmlTree(
      "<?xml version=\"1.0\"?><a:top xmlns:a=\"DAV:\" xmlns=\"urn:d\">"
      "<a:one>x<b:two xmlns:b=\"urn:b\"> y </b:two>z</a:one><plain/><none xmlns=\"\"/></a:top>");
  ASSERT_TRUE(root.has_value());
  EXPECT_TRUE(root->Is("DAV:", "top"));
  ASSERT_EQ(root->children.size(), 3u);
  const XmlElement* one = root->Child("DAV:", "one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->text, "xz");  // its own text, not its child's
  ASSERT_NE(one->Child("urn:b", "two"), nullptr);
  EXPECT_EQ(one->Child("urn:b", "two")->text, " y ");
  EXPECT_TRUE(root->children[1].Is("urn:d", "plain"));
  EXPECT_TRUE(root->children[2].Is("", "none"));
  EXPECT_EQ(root->Child("urn:b", "one"), nullptr);
}

TEST(XmlTreeTest, DecodesEntitiesAndCdata) {
  const auto root = ParseXmlTree("<t>a&lt;&amp;&#x41;<![CDATA[<b>]]></t>");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->text, "a<&A<b>");
}

TEST(XmlTreeTest, RefusesMalformedDocuments) {
  for (std::string_view document : {"", "<", "<a>", "<a></b>", "<p:a/>", "<a/><b/>", "text",
                                    "<a x='1' x='2'/>", "<a>&e;</a>"}) {
    EXPECT_FALSE(ParseXmlTree(document).has_value()) << document;
  }
}

TEST(XmlTreeTest, NeverLoadsAnExternalEntity) {
  const auto root = ParseXmlTree(
      "<!DOCTYPE a [<!ENTITY e SYSTEM \"file:///etc/hostname\">]><a>before&e;after</a>");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->text, "beforeafter");
}

TEST(XmlTreeTest, RefusesNestingDeeperThanTheLimit) {
  std::string deep;
  for (std::size_t i = 0; i < kMaxXmlDepth; ++i) deep += "<a>";
  for (std::size_t i = 0; i < kMaxXmlDepth; ++i) deep += "</a>";
  EXPECT_TRUE(ParseXmlTree(deep).has_value());
  EXPECT_FALSE(ParseXmlTree("<a>" + deep + "</a>").has_value());
}

}  // namespace
}  // namespace fencegate::encoding
