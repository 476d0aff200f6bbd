#include "resource_adapters/s3/s3_multi_delete_request.h"

#include <unordered_set>

#include "base/encoding/xml_escape.h"
#include "base/encoding/xml_tree.h"

namespace fencegate::adapters::s3 {

namespace {

constexpr std::string_view kS3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/";

// Clients send the elements in S3's namespace or in none (the AWS CLI does the former, many
// hand-written requests the latter).
bool IsS3(const encoding::XmlElement& element, std::string_view name) {
  return element.name == name && (element.ns.empty() || element.ns == kS3Namespace);
}

}  // namespace

std::optional<std::string> ParseMultiDelete(std::string_view body, MultiDeleteRequest* out) {
  const std::optional<encoding::XmlElement> root = encoding::ParseXmlTree(body);
  if (!root) return "the body is not well-formed XML";
  if (!IsS3(*root, "Delete")) return "the body's root element is not Delete";
  std::unordered_set<std::string_view> seen;
  out->keys.clear();
  out->quiet = false;
  for (const encoding::XmlElement& child : root->children) {
    if (IsS3(child, "Quiet")) {
      out->quiet = child.text == "true";
      continue;
    }
    if (!IsS3(child, "Object")) continue;
    const encoding::XmlElement* key = nullptr;
    for (const encoding::XmlElement& field : child.children) {
      if (IsS3(field, "Key")) key = &field;
      if (IsS3(field, "VersionId")) {
        return "an Object names a VersionId: a fenced DeleteObjects deletes current objects only";
      }
    }
    if (key == nullptr || key->text.empty()) return "an Object has no Key";
    if (out->keys.size() == kMaxMultiDeleteKeys) {
      return "more than " + std::to_string(kMaxMultiDeleteKeys) + " objects";
    }
    out->keys.push_back(key->text);
  }
  if (out->keys.empty()) return "no Object to delete";
  // Each key once, in the order first listed (S3 answers a repeated key once too).
  std::vector<std::string> unique;
  unique.reserve(out->keys.size());
  for (std::string& key : out->keys) {
    if (seen.insert(key).second) unique.push_back(key);
  }
  out->keys = std::move(unique);
  return std::nullopt;
}

std::string DeleteResultXml(const std::vector<KeyDeleteOutcome>& outcomes, bool quiet) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult xmlns=\"" +
                    std::string(kS3Namespace) + "\">";
  for (const KeyDeleteOutcome& outcome : outcomes) {
    if (outcome.deleted) {
      if (quiet) continue;
      xml += "<Deleted><Key>";
      encoding::AppendXmlEscaped(outcome.key, &xml);
      xml += "</Key></Deleted>";
      continue;
    }
    xml += "<Error><Key>";
    encoding::AppendXmlEscaped(outcome.key, &xml);
    xml += "</Key><Code>";
    encoding::AppendXmlEscaped(outcome.code, &xml);
    xml += "</Code><Message>";
    encoding::AppendXmlEscaped(outcome.message, &xml);
    xml += "</Message></Error>";
  }
  xml += "</DeleteResult>";
  return xml;
}

}  // namespace fencegate::adapters::s3
