#include "gateway/config/config_sections.h"

#include <limits>
#include <string_view>

namespace fencegate::gateway::config_reading {

void ReadLimits(Reader& reader, const YAML::Node& node, Limits* out) {
  const std::string path = "limits";
  if (!reader.ExpectMapping(node, path,
                            {"max_header_bytes", "max_body_bytes", "max_connections",
                             "relay_buffer_memory", "headers_with_underscores"}))
    return;
  if (node["max_header_bytes"]) {
    reader.Size(node["max_header_bytes"], Child(path, "max_header_bytes"), 1u << 10, 1u << 20,
                &out->max_header_bytes);
  }
  if (node["max_body_bytes"]) {
    reader.Size(node["max_body_bytes"], Child(path, "max_body_bytes"), 0,
                std::numeric_limits<std::uint64_t>::max(), &out->max_body_bytes);
  }
  if (node["max_connections"]) {
    reader.Count(node["max_connections"], Child(path, "max_connections"), 1, 10'000'000,
                 &out->max_connections);
  }
  if (node["relay_buffer_memory"]) {
    reader.Size(node["relay_buffer_memory"], Child(path, "relay_buffer_memory"), 1u << 20,
                std::numeric_limits<std::uint64_t>::max(), &out->relay_buffer_memory);
  }
  if (node["headers_with_underscores"]) {
    reader.Choice(node["headers_with_underscores"], Child(path, "headers_with_underscores"),
                  {{"drop", UnderscoreAction::kDrop},
                   {"reject", UnderscoreAction::kReject},
                   {"allow", UnderscoreAction::kAllow}},
                  "", &out->headers_with_underscores);
  }
}

void ReadTimeouts(Reader& reader, const YAML::Node& node, Timeouts* out) {
  const std::string path = "timeouts";
  struct Field {
    std::string_view key;
    std::chrono::milliseconds Timeouts::*member;
    bool allow_zero;
  };
  // A zero drain means "stop at once"; every other timeout of zero would fail all requests.
  static constexpr Field kFields[] = {
      {"header_read", &Timeouts::header_read, false},
      {"body_read", &Timeouts::body_read, false},
      {"idle", &Timeouts::idle, false},
      {"response_write", &Timeouts::response_write, false},
      {"shutdown_drain", &Timeouts::shutdown_drain, true},
      {"barrier_wait", &Timeouts::barrier_wait, false},
      {"write_deadline", &Timeouts::write_deadline, false},
  };
  std::vector<std::string_view> known;
  for (const Field& field : kFields) known.push_back(field.key);
  if (!reader.ExpectMapping(node, path, known)) return;
  for (const Field& field : kFields) {
    const std::string key(field.key);
    if (node[key])
      reader.Duration(node[key], Child(path, key), field.allow_zero, &(out->*field.member));
  }
}

void ReadAccessLog(Reader& reader, const YAML::Node& node, AccessLogConfig* out) {
  if (!reader.ExpectMapping(node, "access_log", {"path", "error_lines_per_second"})) return;
  if (node["path"]) {
    reader.String(node["path"], "access_log.path", &out->path);
    if (out->path != "-") out->path = reader.ResolvePath(out->path);  // "-": stdout
  }
  if (node["error_lines_per_second"]) {
    reader.Count(node["error_lines_per_second"], "access_log.error_lines_per_second", 0, 1'000'000,
                 &out->error_lines_per_second);
  }
}

void ReadEventLog(Reader& reader, const YAML::Node& node, EventLogConfig* out) {
  if (!reader.ExpectMapping(node, "log", {"path", "level"})) return;
  if (node["path"]) {
    reader.String(node["path"], "log.path", &out->path);
    if (out->path != "-") out->path = reader.ResolvePath(out->path);  // "-": stderr
  }
  if (node["level"]) {
    reader.Choice<log::Level>(
        node["level"], "log.level",
        {{"info", log::Level::kInfo}, {"warn", log::Level::kWarn}, {"error", log::Level::kError}},
        "", &out->level);
  }
}

void ReadTraceContext(Reader& reader, const YAML::Node& node, TraceContextConfig* out) {
  if (!reader.ExpectMapping(node, "trace_context", {"generate"})) return;
  if (node["generate"]) reader.Bool(node["generate"], "trace_context.generate", &out->generate);
}

}  // namespace fencegate::gateway::config_reading
