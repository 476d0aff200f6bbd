#include "gateway/config/command_line.h"

#include <arpa/inet.h>
#include <filesystem>

#include <cstdint>
#include <string_view>

#include "gateway/config/config_loader.h"

namespace fencegate::gateway {

namespace {

bool IsIpLiteral(int family, const std::string& host) {
  unsigned char buffer[16];
  return inet_pton(family, host.c_str(), buffer) == 1;
}

// Splits "--name=value" into name and value; `has_value` tells "--name=" from "--name".
void SplitOption(std::string_view arg, std::string_view* name, std::string_view* value,
                 bool* has_value) {
  std::size_t equals = arg.find('=');
  *has_value = equals != std::string_view::npos;
  *name = arg.substr(0, equals);
  *value = *has_value ? arg.substr(equals + 1) : std::string_view();
}

}  // namespace

bool ParseListenAddress(const std::string& text, ListenAddress* out, std::string* error) {
  std::string host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    std::size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *error = "expected [IPV6]:PORT, got '" + text + "'";
      return false;
    }
    host = text.substr(1, close - 1);
    port_text = std::string_view(text).substr(close + 2);
    if (!IsIpLiteral(AF_INET6, host)) {
      *error = "'" + host + "' is not an IPv6 address";
      return false;
    }
  } else {
    std::size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
      *error = "expected HOST:PORT, got '" + text + "'";
      return false;
    }
    host = text.substr(0, colon);
    port_text = std::string_view(text).substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      *error = "an IPv6 address needs brackets: [" + host + "]:PORT";
      return false;
    }
    if (host != "localhost" && !IsIpLiteral(AF_INET, host)) {
      *error = "host must be an IPv4 address, [IPv6 address] or localhost, got '" + host + "'";
      return false;
    }
  }
  std::uint32_t port = 0;
  bool port_ok = !port_text.empty() && port_text.size() <= 5;
  for (char c : port_text) {
    if (c < '0' || c > '9') {
      port_ok = false;
      break;
    }
    port = port * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (!port_ok || port > 65535) {
    *error = "port must be a number from 0 to 65535, got '" + std::string(port_text) + "'";
    return false;
  }
  out->host = std::move(host);
  out->port = static_cast<std::uint16_t>(port);
  return true;
}

bool ParseCommandLine(const std::vector<std::string>& args, CommandLine* out, std::string* error) {
  CommandLine parsed;
  std::size_t i = 0;
  // Accepts argv with or without the program name in front: fencegate takes no positional
  // arguments, so a leading word that is not an option can only be the program name.
  if (!args.empty() && !args[0].starts_with("-")) i = 1;

  bool config_given = false;
  bool check_given = false;
  for (; i < args.size(); ++i) {
    std::string_view name;
    std::string_view inline_value;
    bool has_inline_value = false;
    SplitOption(args[i], &name, &inline_value, &has_inline_value);

    auto flag = [&](CommandLine::Action action) {
      if (has_inline_value) {
        *error = std::string(name) + " takes no value";
        return false;
      }
      parsed.action = action;
      return true;
    };
    // The option's value: after '=' or the next argument.
    auto value = [&](std::string* result) {
      if (has_inline_value) {
        *result = std::string(inline_value);
      } else if (i + 1 < args.size()) {
        *result = args[++i];
      } else {
        *error = std::string(name) + " needs a value";
        return false;
      }
      if (result->empty()) {
        *error = std::string(name) + " needs a non-empty value";
        return false;
      }
      return true;
    };
    auto listen_value = [&](std::optional<ListenAddress>* result) {
      std::string text;
      if (!value(&text)) return false;
      ListenAddress address;
      std::string address_error;
      if (!ParseListenAddress(text, &address, &address_error)) {
        *error = std::string(name) + ": " + address_error;
        return false;
      }
      *result = address;
      return true;
    };

    bool ok = false;
    if (name == "--help" || name == "-h") {
      ok = flag(CommandLine::Action::kHelp);
    } else if (name == "--version") {
      ok = flag(CommandLine::Action::kVersion);
    } else if (name == "--config" || name == "--check-config") {
      bool& given = name == "--config" ? config_given : check_given;
      if (given) {
        *error = std::string(name) + " given twice";
        return false;
      }
      given = true;
      ok = value(&parsed.config_path);
      if (name == "--check-config") parsed.action = CommandLine::Action::kCheckConfig;
    } else if (name == "--listen") {
      ok = listen_value(&parsed.listen);
    } else if (name == "--admin-listen") {
      ok = listen_value(&parsed.admin_listen);
    } else if (name == "--data-dir") {
      std::string dir;
      ok = value(&dir);
      parsed.data_dir = dir;
    } else if (name == "--accept-fence-key-change") {
      std::string route;
      ok = value(&route);
      parsed.accepted_fence_key_changes.push_back(route);
    } else {
      *error = "unknown option '" + args[i] + "' (see --help)";
      return false;
    }
    if (!ok) return false;
  }
  if (config_given && check_given) {
    *error = "--config and --check-config both name a file; give one";
    return false;
  }
  *out = std::move(parsed);
  return true;
}

void ApplyOverrides(const CommandLine& command_line, Config* config) {
  config->accepted_fence_key_changes = command_line.accepted_fence_key_changes;
  if (command_line.listen) config->listen = *command_line.listen;
  if (command_line.admin_listen) config->admin_listen = *command_line.admin_listen;
  if (command_line.data_dir) {
    // A command-line path is the shell's: relative to the working directory.
    config->data_dir =
        std::filesystem::absolute(*command_line.data_dir).lexically_normal().string();
    config->data_dir_as_written.clear();
    // An empty store.path already means <data_dir>/fences, resolved by the runtime. Filesystem
    // roots are the served resource, not state, so they move only where the file asked for it
    // with "{data_dir}"; a literal root stays as written.
    ExpandDataDirInPaths(config);
  }
}

const char* DefaultConfigPath() { return FENCEGATE_DEFAULT_CONFIG; }

std::string UsageText() {
  return "Usage: fencegate [OPTIONS]\n"
         "       fencegate lock acquire|renew|release|status|run NAME ... (fencegate lock --help)\n"
         "       fencegate store init|floor ... (fencegate store --help)\n"
         "\n"
         "A fencing-aware HTTP reverse proxy: writes carry a Fencing-Token, stale ones are "
         "refused.\n"
         "\n"
         "Options (each takes its value as '--opt VALUE' or '--opt=VALUE'):\n"
         "  --config FILE         configuration file (default: " FENCEGATE_DEFAULT_CONFIG
         ")\n"
         "  --check-config FILE   validate FILE, print 'FILE: OK' or its errors, and exit\n"
         "  --listen HOST:PORT    traffic listener, overrides 'listen' ([V6]:PORT for IPv6)\n"
         "  --admin-listen HOST:PORT\n"
         "                        operator listener, overrides 'admin_listen'\n"
         "  --data-dir DIR        state directory, overrides 'data_dir'\n"
         "  --accept-fence-key-change ROUTE\n"
         "                        start although ROUTE's fence_key or backend changed while\n"
         "                        the store holds its fences (repeatable; see fencegate(8))\n"
         "  --version             print the version and exit\n"
         "  -h, --help            print this help and exit\n"
         "\n"
         "Exit codes: 0 ok, 1 configuration error, 2 usage error, 3 startup failure,\n"
         "4 shutdown drain cut requests short.\n";
}

}  // namespace fencegate::gateway
