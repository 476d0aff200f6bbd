#include "lockstore/fence/fence_key_template.h"

#include <charconv>
#include <string>

namespace fencegate::lockstore {
namespace {

Status ParseError(std::string_view text, std::size_t position, std::string_view what) {
  std::string message = "fence key template \"";
  message.append(text);
  message += "\": ";
  message.append(what);
  message += " at position ";
  message += std::to_string(position);
  return Status::InvalidArgument(std::move(message));
}

// Returns the 1-based `n`-th segment of `path` ("/a/b/c": 1=a, 2=b, 3=c); empty if absent.
std::string_view PathSegment(std::string_view path, int n) {
  std::size_t pos = (!path.empty() && path.front() == '/') ? 1 : 0;
  for (int i = 1; i < n; ++i) {
    const std::size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) return {};
    pos = slash + 1;
  }
  if (pos >= path.size()) return {};
  const std::size_t slash = path.find('/', pos);
  return path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
}

}  // namespace

Status FenceKeyTemplate::Parse(std::string_view text, FenceKeyTemplate* out) {
  if (text.empty()) return Status::InvalidArgument("fence key template is empty");

  std::vector<Part> parts;
  std::string literal;
  auto flush_literal = [&] {
    if (literal.empty()) return;
    Part part;
    part.literal = std::move(literal);
    parts.push_back(std::move(part));
    literal.clear();
  };

  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        literal += '}';
        ++i;
        continue;
      }
      return ParseError(text, i, "unmatched '}' (write \"}}\" for a literal brace)");
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      literal += '{';
      ++i;
      continue;
    }
    const std::size_t close = text.find('}', i + 1);
    if (close == std::string_view::npos) {
      return ParseError(text, i, "unterminated placeholder (write \"{{\" for a literal brace)");
    }
    const std::string_view name = text.substr(i + 1, close - i - 1);
    Part part;
    if (name == "path") {
      part.kind = Part::Kind::kPath;
    } else if (name == "host") {
      part.kind = Part::Kind::kHost;
    } else if (name == "route") {
      part.kind = Part::Kind::kRoute;
    } else if (name.starts_with("segment:")) {
      const std::string_view number = name.substr(8);
      int segment = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), segment);
      if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
          segment < 1) {
        return ParseError(text, i,
                          "bad placeholder \"{" + std::string(name) +
                              "}\" (segment numbers are 1-based integers)");
      }
      part.kind = Part::Kind::kSegment;
      part.segment = segment;
    } else {
      return ParseError(text, i,
                        "unknown placeholder \"{" + std::string(name) +
                            "}\" (expected {path}, {segment:N}, {host} or {route})");
    }
    flush_literal();
    parts.push_back(std::move(part));
    i = close;
  }
  flush_literal();

  out->source_ = std::string(text);
  out->parts_ = std::move(parts);
  return Status::Ok();
}

bool FenceKeyTemplate::Render(const RequestFacts& facts, std::string* out) const {
  out->clear();
  out->reserve(source_.size() + facts.path.size() + facts.host.size() + facts.route.size());
  for (const Part& part : parts_) {
    std::string_view value;
    switch (part.kind) {
      case Part::Kind::kLiteral:
        out->append(part.literal);
        continue;
      case Part::Kind::kPath:
        value = facts.path;
        break;
      case Part::Kind::kSegment:
        value = PathSegment(facts.path, part.segment);
        break;
      case Part::Kind::kHost:
        value = facts.host;
        break;
      case Part::Kind::kRoute:
        value = facts.route;
        break;
    }
    if (value.empty()) return false;
    out->append(value);
  }
  return true;
}

std::string FenceKeyTemplate::KeyPrefix(std::string_view route) const {
  std::string prefix;
  for (const Part& part : parts_) {
    if (part.kind == Part::Kind::kLiteral) {
      prefix += part.literal;
    } else if (part.kind == Part::Kind::kRoute) {
      prefix += route;
    } else {
      break;
    }
  }
  return prefix;
}

}  // namespace fencegate::lockstore
