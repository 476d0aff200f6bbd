#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gateway/config/auth_config_loader.h"
#include "gateway/config/config_loader.h"
#include "gateway/config/value_parsers.h"

// Reading YAML nodes for the configuration loader: errors located as FILE:LINE:COL, unknown and
// duplicate keys (with a suggestion for a likely typo), and typed values.

namespace fencegate::gateway::config_reading {

// Collects errors for one file.
class ErrorSink {
 public:
  ErrorSink(std::string file, std::vector<ConfigError>* errors)
      : file_(std::move(file)), errors_(errors) {}

  void Add(const YAML::Mark& mark, std::string key, std::string message) {
    // yaml-cpp marks are 0-based and -1 when unknown; ConfigError is 1-based and 0 when unknown.
    ConfigError error;
    error.file = file_;
    error.line = mark.line >= 0 ? mark.line + 1 : 0;
    error.column = mark.column >= 0 ? mark.column + 1 : 0;
    error.key = std::move(key);
    error.message = std::move(message);
    errors_->push_back(std::move(error));
  }
  void Add(const YAML::Node& node, std::string key, std::string message) {
    Add(node.Mark(), std::move(key), std::move(message));
  }

  std::size_t count() const { return errors_->size(); }

  // The schema walk (LoadConfigText's `schema_keys`): a key a mapping may have, and whether it has.
  void set_schema_keys(std::vector<SchemaKey>* schema_keys) { schema_keys_ = schema_keys; }
  void SchemaKeySeen(std::string key, bool present) {
    if (schema_keys_ != nullptr) schema_keys_->push_back({std::move(key), present});
  }

  // For the auth readers (auth_config_loader.h): problems at a node or in another file.
  AuthConfigErrors ForAuth() {
    return {[this](const YAML::Node& node, const std::string& key, const std::string& message) {
              Add(node, key, message);
            },
            [this](const std::string& file, int line, const std::string& key,
                   const std::string& message) {
              errors_->push_back({file, line, 0, key, message});
            },
            {},
            [this](const std::string& key, bool present) { SchemaKeySeen(key, present); }};
  }

 private:
  std::string file_;
  std::vector<ConfigError>* errors_;
  std::vector<SchemaKey>* schema_keys_ = nullptr;
};

// Reads typed values out of YAML nodes, reporting every problem to the sink.
class Reader {
 public:
  // `base_dir`: the config file's directory, absolute; relative paths in the file are relative
  // to it (never to the working directory, so the file means the same wherever it is run from).
  Reader(ErrorSink* sink, std::string base_dir) : sink_(sink), base_dir_(std::move(base_dir)) {}

  // Checks that `node` is a mapping whose keys are all in `known`, reporting unknown and
  // duplicate keys. Returns false (after reporting) if `node` is not a mapping at all.
  bool ExpectMapping(const YAML::Node& node, const std::string& path,
                     const std::vector<std::string_view>& known);

  // Returns the scalar text of `node`, or reports what it expected and returns false.
  bool Scalar(const YAML::Node& node, const std::string& path, std::string_view expected,
              std::string* out);

  void String(const YAML::Node& node, const std::string& path, std::string* out);

  // A filesystem path: a string, made absolute against the config file's directory.
  void Path(const YAML::Node& node, const std::string& path, std::string* out);
  std::string ResolvePath(const std::string& file) const;

  // A file the gateway reads at start (a certificate, key or CA bundle): it must open for
  // reading now, so that --check-config finds what start would fail on. Empty: not set.
  void ReadableFile(const YAML::Node& node, const std::string& path, std::string* out);

  void Bool(const YAML::Node& node, const std::string& path, bool* out);

  // Sets *out to the value of the choice `node` names; reports the names it expected otherwise.
  // `note` (may be empty) follows the list of names in that report.
  template <typename T>
  void Choice(const YAML::Node& node, const std::string& path,
              std::initializer_list<std::pair<std::string_view, std::type_identity_t<T>>> choices,
              std::string_view note, T* out) {
    std::string expected;
    std::size_t index = 0;
    for (const auto& choice : choices) {
      if (index > 0) expected += index + 1 == choices.size() ? " or " : ", ";
      expected += Quote(choice.first);
      ++index;
    }
    if (!note.empty()) expected.append(" ").append(note);
    std::string text;
    if (!Scalar(node, path, expected, &text)) return;
    for (const auto& [name, value] : choices) {
      if (text == name) {
        *out = value;
        return;
      }
    }
    sink_->Add(node, path, "expected " + expected + "; got " + Quote(text));
  }

  template <typename T>
  void Count(const YAML::Node& node, const std::string& path, std::uint64_t min, std::uint64_t max,
             T* out) {
    std::string text;
    if (!Scalar(node, path, "a whole number", &text)) return;
    std::uint64_t value = 0;
    if (!ParseDecimal(text, &value)) {
      sink_->Add(node, path, "expected a whole number, got " + Quote(text));
    } else if (value < min || value > max) {
      sink_->Add(node, path,
                 "must be between " + std::to_string(min) + " and " + std::to_string(max));
    } else {
      *out = static_cast<T>(value);
    }
  }

  template <typename T>
  void Size(const YAML::Node& node, const std::string& path, std::uint64_t min, std::uint64_t max,
            T* out) {
    std::string text;
    if (!Scalar(node, path, "a size such as 512, 16KiB, 1MiB or 8GiB", &text)) return;
    std::uint64_t value = 0;
    if (!ParseSize(text, &value)) {
      sink_->Add(node, path,
                 "expected a size such as 512, 16KiB, 1MiB or 8GiB (units B, KiB, MiB, GiB, TiB, "
                 "KB, MB, GB, TB), got " +
                     Quote(text));
    } else if (value < min || value > max) {
      sink_->Add(
          node, path,
          "must be between " + std::to_string(min) + " and " + std::to_string(max) + " bytes");
    } else {
      *out = static_cast<T>(value);
    }
  }

  void Duration(const YAML::Node& node, const std::string& path, bool allow_zero,
                std::chrono::milliseconds* out);

  void Microseconds(const YAML::Node& node, const std::string& path, std::chrono::microseconds max,
                    std::chrono::microseconds* out);

  void Listen(const YAML::Node& node, const std::string& path, ListenAddress* out);

  ErrorSink* sink() { return sink_; }

 private:
  ErrorSink* sink_;
  std::string base_dir_;
};

// A credential given inline (KEY), in a file (KEY_file, trailing newline dropped) or in an
// environment variable (KEY_env): exactly one of the three.
void ReadSecret(Reader& reader, const YAML::Node& node, const std::string& path,
                const std::string& key, std::string_view required_for, std::string* out);

}  // namespace fencegate::gateway::config_reading
