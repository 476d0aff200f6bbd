#include "gateway/config/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gateway/config/command_line.h"

namespace fencegate::gateway::config_reading {

namespace {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The closest known key, if it is close enough to be a plausible typo.
std::string Suggestion(std::string_view unknown, const std::vector<std::string_view>& known) {
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : known) {
    std::size_t distance = EditDistance(unknown, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best.empty() || best_distance > std::max<std::size_t>(2, best.size() / 3)) return {};
  return std::string(best);
}

// Why `file` cannot be read, or empty when it can. O_NONBLOCK: a FIFO must not hang the check.
std::string UnreadableFileProblem(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::strerror(errno);
  struct stat status {};
  const bool directory = ::fstat(fd, &status) == 0 && S_ISDIR(status.st_mode);
  ::close(fd);
  return directory ? "it is a directory" : "";
}

}  // namespace

bool Reader::ExpectMapping(const YAML::Node& node, const std::string& path,
                           const std::vector<std::string_view>& known) {
  if (!node.IsMap()) {
    sink_->Add(node, path, "expected a mapping of keys to values");
    return false;
  }
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      sink_->Add(key, path, "keys must be plain strings");
      continue;
    }
    const std::string& name = key.Scalar();
    if (!seen.insert(name).second) {
      sink_->Add(key, Child(path, name), "duplicate key");
      continue;
    }
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string message = "unknown key " + Quote(name);
    std::string suggestion = Suggestion(name, known);
    if (!suggestion.empty()) message += "; did you mean " + Quote(suggestion) + "?";
    sink_->Add(key, Child(path, name), std::move(message));
  }
  for (std::string_view name : known) {
    sink_->SchemaKeySeen(Child(path, name), seen.count(std::string(name)) != 0);
  }
  return true;
}

bool Reader::Scalar(const YAML::Node& node, const std::string& path, std::string_view expected,
                    std::string* out) {
  if (node.IsScalar()) {
    *out = node.Scalar();
    return true;
  }
  std::string got = node.IsNull() ? "nothing" : node.IsMap() ? "a mapping" : "a list";
  sink_->Add(node, path, "expected " + std::string(expected) + ", got " + got);
  return false;
}

void Reader::String(const YAML::Node& node, const std::string& path, std::string* out) {
  std::string text;
  if (!Scalar(node, path, "a string (write \"\" for an empty one)", &text)) return;
  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return std::iscntrl(static_cast<unsigned char>(c)); })) {
    sink_->Add(node, path, "control characters are not allowed");
    return;
  }
  *out = std::move(text);
}

void Reader::Path(const YAML::Node& node, const std::string& path, std::string* out) {
  String(node, path, out);
  *out = ResolvePath(*out);
}

std::string Reader::ResolvePath(const std::string& file) const {
  return ResolveAgainst(base_dir_, file);
}

void Reader::ReadableFile(const YAML::Node& node, const std::string& path, std::string* out) {
  const std::size_t errors_before = sink_->count();
  Path(node, path, out);
  if (sink_->count() != errors_before || out->empty()) return;
  const std::string problem = UnreadableFileProblem(*out);
  if (!problem.empty()) sink_->Add(node, path, "cannot read " + Quote(*out) + ": " + problem);
}

void Reader::Bool(const YAML::Node& node, const std::string& path, bool* out) {
  std::string text;
  if (!Scalar(node, path, "true or false", &text)) return;
  if (text == "true" || text == "True" || text == "TRUE") {
    *out = true;
  } else if (text == "false" || text == "False" || text == "FALSE") {
    *out = false;
  } else {
    sink_->Add(node, path, "expected true or false, got " + Quote(text));
  }
}

void Reader::Duration(const YAML::Node& node, const std::string& path, bool allow_zero,
                      std::chrono::milliseconds* out) {
  std::string text;
  if (!Scalar(node, path, "a duration such as 250ms, 10s, 2m or 1h", &text)) return;
  std::chrono::milliseconds value{0};
  if (!ParseDuration(text, &value)) {
    sink_->Add(
        node, path,
        "expected a duration such as 250ms, 10s, 2m or 1h (units ms, s, m, h), got " + Quote(text));
  } else if (!allow_zero && value.count() == 0) {
    sink_->Add(node, path, "must be greater than zero");
  } else {
    *out = value;
  }
}

void Reader::Microseconds(const YAML::Node& node, const std::string& path,
                          std::chrono::microseconds max, std::chrono::microseconds* out) {
  std::string text;
  if (!Scalar(node, path, "a duration such as 500us or 2ms", &text)) return;
  std::chrono::microseconds value{0};
  if (!ParseMicroseconds(text, &value)) {
    sink_->Add(node, path,
               "expected a duration such as 500us or 2ms (units us, ms, s), got " + Quote(text));
  } else if (value > max) {
    sink_->Add(node, path, "must be at most " + std::to_string(max.count()) + "us");
  } else {
    *out = value;
  }
}

void Reader::Listen(const YAML::Node& node, const std::string& path, ListenAddress* out) {
  std::string text;
  if (!Scalar(node, path, "HOST:PORT", &text)) return;
  std::string error;
  if (!ParseListenAddress(text, out, &error)) sink_->Add(node, path, error);
}

void ReadSecret(Reader& reader, const YAML::Node& node, const std::string& path,
                const std::string& key, std::string_view required_for, std::string* out) {
  const std::string file_key = key + "_file";
  const std::string env_key = key + "_env";
  const int given = (node[key] ? 1 : 0) + (node[file_key] ? 1 : 0) + (node[env_key] ? 1 : 0);
  if (given != 1) {
    reader.sink()->Add(node, Child(path, key),
                       "required for " + std::string(required_for) + ": exactly one of " + key +
                           ", " + file_key + " or " + env_key);
    return;
  }
  if (node[key]) {
    reader.String(node[key], Child(path, key), out);
  } else if (node[file_key]) {
    std::string file;
    reader.Path(node[file_key], Child(path, file_key), &file);
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      reader.sink()->Add(node[file_key], Child(path, file_key), "cannot read " + Quote(file));
      return;
    }
    *out = text.str();
    while (!out->empty() && (out->back() == '\n' || out->back() == '\r')) out->pop_back();
  } else {
    std::string name;
    reader.String(node[env_key], Child(path, env_key), &name);
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) {
      reader.sink()->Add(node[env_key], Child(path, env_key),
                         "the environment variable " + Quote(name) + " is not set");
      return;
    }
    *out = value;
  }
  if (out->empty()) reader.sink()->Add(node, Child(path, key), "must not be empty");
}

}  // namespace fencegate::gateway::config_reading
