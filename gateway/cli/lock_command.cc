#include "gateway/cli/lock_command.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <boost/json.hpp>

#include "base/tls_client/client_tls_options.h"
#include "gateway/cli/lock_http_client.h"

namespace fencegate::gateway::lock_client {
namespace json = boost::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// Exit statuses of the lock subcommands (`run` exits with its command's status instead).
constexpr int kExitOk = 0;
constexpr int kExitNotHeld = 1;  // held by someone else (acquire) or lost (renew, run)
constexpr int kExitUsage = 2;
constexpr int kExitFailed = 3;  // transport failure, bad answer, server error

// How often `run` looks at its command while waiting for the next renewal.
constexpr milliseconds kPollInterval{20};

struct Options {
  std::string verb;
  std::string name;
  milliseconds ttl{30000};
  milliseconds wait{0};
  milliseconds kill_grace{5000};
  std::string url = "http://127.0.0.1:8080/locks/";
  std::string owner;
  // locks.policy's credential: from --api-key-file or $FENCEGATE_API_KEY, never argv (which
  // every local user can read in ps).
  std::string api_key;
  tls_client::ClientTlsOptions tls;
  bool json = false;  // results and errors as one JSON object on stdout
  std::vector<std::string> command;
};

// --json is looked for before parsing, so that even a usage error is reported as JSON.
bool WantsJson(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--json") return true;
  }
  return false;
}

// Reports a failure: one line on stderr, and with --json one object on stdout for scripts:
// {"ok": false, "exit_code": N, "error": "...", "http_status": S, "problem": {...}} (the last
// two when the gateway answered; "problem" is its problem+json body, or the text if not JSON).
int Fail(bool json_output, int exit_code, const std::string& message,
         const HttpAnswer* answer = nullptr) {
  std::cerr << "fencegate lock: " << message;
  if (answer != nullptr) std::cerr << ": HTTP " << answer->status << " " << answer->body;
  std::cerr << std::endl;
  if (!json_output) return exit_code;
  json::object out{{"ok", false}, {"exit_code", exit_code}, {"error", message}};
  if (answer != nullptr) {
    out["http_status"] = answer->status;
    boost::system::error_code ec;
    json::value problem = json::parse(answer->body, ec);
    out["problem"] = ec ? json::value(answer->body) : std::move(problem);
  }
  std::cout << json::serialize(out) << std::endl;
  return exit_code;
}

// The key file's content without its trailing newline; false with `error` set if unusable.
bool ReadApiKeyFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    *error = "--api-key-file: cannot read '" + path + "'";
    return false;
  }
  *out = text.str();
  while (!out->empty() && (out->back() == '\n' || out->back() == '\r')) out->pop_back();
  if (out->empty()) {
    *error = "--api-key-file: '" + path + "' is empty";
    return false;
  }
  return true;
}

bool ParseCommandDuration(const std::string& text, milliseconds* out) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 12) return false;
  const long long value = std::stoll(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  if (unit == "ms") {
    *out = milliseconds(value);
  } else if (unit == "s" || unit.empty()) {
    *out = milliseconds(value * 1000);
  } else if (unit == "m") {
    *out = milliseconds(value * 60000);
  } else {
    return false;
  }
  return true;
}

bool ParseArgs(const std::vector<std::string>& args, Options* out, std::string* error) {
  if (args.size() < 2) {
    *error = "expected a verb and a lock name";
    return false;
  }
  out->verb = args[0];
  out->name = args[1];
  if (out->verb != "acquire" && out->verb != "renew" && out->verb != "release" &&
      out->verb != "run" && out->verb != "status") {
    *error = "unknown lock verb '" + out->verb + "'";
    return false;
  }
  if (const char* url = std::getenv("FENCEGATE_LOCK_URL")) out->url = url;
  if (const char* owner = std::getenv("FENCEGATE_LOCK_OWNER_TOKEN")) out->owner = owner;
  if (const char* key = std::getenv("FENCEGATE_API_KEY")) out->api_key = key;
  for (std::size_t i = 2; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      out->command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg == "--json") {
      out->json = true;
      continue;
    }
    if (arg == "--no-verify-hostname") {
      out->tls.verify_hostname = false;
      continue;
    }
    std::string name = arg;
    std::string value;
    const auto equals = arg.find('=');
    if (equals != std::string::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      *error = arg + " needs a value";
      return false;
    }
    milliseconds* duration = name == "--ttl"          ? &out->ttl
                             : name == "--wait"       ? &out->wait
                             : name == "--kill-grace" ? &out->kill_grace
                                                      : nullptr;
    if (duration != nullptr) {
      if (!ParseCommandDuration(value, duration)) {
        *error = name + " expects a duration such as 500ms, 30s or 2m, got '" + value + "'";
        return false;
      }
    } else if (name == "--url") {
      out->url = value;
    } else if (name == "--owner") {
      out->owner = value;
    } else if (name == "--api-key-file") {
      if (!ReadApiKeyFile(value, &out->api_key, error)) return false;
    } else if (name == "--ca-file") {
      out->tls.ca_file = value;
    } else if (name == "--client-cert-file") {
      out->tls.client_cert_file = value;
    } else if (name == "--client-key-file") {
      out->tls.client_key_file = value;
    } else if (name == "--server-name") {
      out->tls.server_name = value;
    } else {
      *error = "unknown option " + name;
      return false;
    }
  }
  if (out->verb == "run" && out->command.empty()) {
    *error = "run needs a command after --";
    return false;
  }
  if ((out->verb == "renew" || out->verb == "release") && out->owner.empty()) {
    *error = out->verb + " needs --owner TOKEN (or FENCEGATE_LOCK_OWNER_TOKEN)";
    return false;
  }
  if (out->tls.client_cert_file.empty() != out->tls.client_key_file.empty()) {
    *error = "--client-cert-file and --client-key-file go together";
    return false;
  }
  return true;
}

std::string AcquireBody(const Options& options) {
  return json::serialize(
      json::object{{"ttl_ms", options.ttl.count()}, {"wait_ms", options.wait.count()}});
}

std::string OwnerBody(const std::string& owner) {
  return json::serialize(json::object{{"owner_token", owner}});
}

// Reports a non-2xx answer and maps it to an exit status.
int Refused(const Options& options, const std::string& what, const HttpAnswer& answer) {
  return Fail(options.json,
              answer.status == 409 || answer.status == 410 ? kExitNotHeld : kExitFailed,
              what + " refused", &answer);
}

// A call whose transport failure is reported (on stderr only: the caller decides the exit).
std::optional<HttpAnswer> Call(const LockApiConnection& connection, const std::string& target,
                               const std::string& body, milliseconds timeout,
                               std::string* error = nullptr) {
  std::string reason;
  auto answer = Send(connection, Method::kPost, target, body, timeout, &reason);
  if (!answer) {
    if (error != nullptr)
      *error = target + ": " + reason;
    else
      std::cerr << "fencegate lock: " << target << ": " << reason << std::endl;
  }
  return answer;
}

// ---- status ----

// The lock's state as the lock API's GET reports it, which never includes an owner token.
int Status(const Options& options, const LockApiConnection& connection) {
  std::string error;
  auto answer = Send(connection, Method::kGet, connection.url.prefix + options.name, "",
                     milliseconds(10000), &error);
  if (!answer) return Fail(options.json, kExitFailed, "status " + options.name + ": " + error);
  if (answer->status != 200) return Refused(options, "status " + options.name, *answer);
  boost::system::error_code ec;
  const json::value state = json::parse(answer->body, ec);
  if (ec || !state.is_object()) {
    return Fail(options.json, kExitFailed, "unexpected status answer", &*answer);
  }
  if (options.json) {
    std::cout << json::serialize(state) << std::endl;
    return kExitOk;
  }
  const json::object& lock = state.as_object();
  auto number = [&](const char* key) -> std::string {
    const json::value* value = lock.if_contains(key);
    return value != nullptr && value->is_number() ? std::to_string(value->to_number<std::int64_t>())
                                                  : "-";
  };
  const json::value* held = lock.if_contains("held");
  const bool is_held = held != nullptr && held->is_bool() && held->as_bool();
  std::cout << "lock:       " << options.name << "\n"
            << "held:       " << (is_held ? "yes" : "no") << "\n";
  if (is_held) {
    const json::value* holder = lock.if_contains("holder_id");
    std::cout << "holder:     "
              << (holder != nullptr && holder->is_string() ? std::string(holder->as_string()) : "-")
              << "\n"
              << "token:      " << number("holder_token") << "\n"
              << "ttl left:   " << number("expires_in_ms") << " ms\n";
  }
  std::cout << "waiters:    " << number("waiters") << "\n"
            << "last token: " << number("last_token") << std::endl;
  return kExitOk;
}

// ---- run ----

std::atomic<pid_t> g_child{0};

// SIGTERM/SIGINT to `fencegate lock run` go to the command, which decides how to stop; the
// lock is then released when it has exited.
void ForwardSignal(int signal_number) {
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, signal_number);
}

pid_t Spawn(const Options& options, const json::object& grant) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setenv("FENCING_TOKEN",
           std::to_string(grant.at("fencing_token").to_number<std::uint64_t>()).c_str(), 1);
  ::setenv("FENCEGATE_LOCK_OWNER_TOKEN", std::string(grant.at("owner_token").as_string()).c_str(),
           1);
  // README "Tokens": the Fencing-Token-Signature value for routes that require signed tokens.
  if (const auto* signature = grant.if_contains("fencing_token_signature")) {
    ::setenv("FENCING_TOKEN_SIGNATURE", std::string(signature->as_string()).c_str(), 1);
  }
  ::setenv("FENCEGATE_LOCK_NAME", options.name.c_str(), 1);
  ::setenv("FENCEGATE_LOCK_TTL_MS", std::to_string(options.ttl.count()).c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "fencegate lock: cannot run " << options.command[0] << ": " << std::strerror(errno)
            << std::endl;
  ::_exit(127);
}

int StatusOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return kExitFailed;
}

// Stops the command: SIGTERM, then SIGKILL after the grace period. Returns its wait status.
int Stop(pid_t child, milliseconds grace) {
  ::kill(child, SIGTERM);
  const auto deadline = Clock::now() + grace;
  int status = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(child, &status, WNOHANG) == child) return status;
    std::this_thread::sleep_for(kPollInterval);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return status;
}

int Run(const Options& options, const LockApiConnection& connection) {
  const std::string lock_target = connection.url.prefix + options.name;
  const auto sent = Clock::now();
  std::string error;
  auto acquired = Call(connection, lock_target, AcquireBody(options),
                       options.wait + milliseconds(10000), &error);
  if (!acquired) return Fail(options.json, kExitFailed, error);
  if (acquired->status != 200) return Refused(options, "acquire " + options.name, *acquired);
  boost::system::error_code ec;
  const json::value grant = json::parse(acquired->body, ec);
  if (ec || !grant.is_object() || !grant.as_object().contains("owner_token")) {
    return Fail(options.json, kExitFailed, "unexpected acquire answer", &*acquired);
  }
  const std::string owner(grant.at("owner_token").as_string());
  // fencegate's lease starts at its answer, which is at least waited_ms after the acquire was
  // sent: counting from there never outlasts the server's lease. Renewals go out at a third of
  // the TTL, so two can fail before it ends.
  const auto waited = milliseconds(grant.at("waited_ms").to_number<std::int64_t>());
  auto lease_end = sent + waited + options.ttl;
  const milliseconds renew_every = std::max(options.ttl / 3, milliseconds(1));

  struct sigaction forward {};
  forward.sa_handler = ForwardSignal;
  sigemptyset(&forward.sa_mask);
  ::sigaction(SIGTERM, &forward, nullptr);
  ::sigaction(SIGINT, &forward, nullptr);
  const pid_t child = Spawn(options, grant.as_object());
  if (child < 0) {
    std::cerr << "fencegate lock: fork failed: " << std::strerror(errno) << std::endl;
    Call(connection, lock_target + "/release", OwnerBody(owner), milliseconds(5000));
    return kExitFailed;
  }
  g_child = child;

  auto next_renewal = Clock::now() + renew_every;
  int wait_status = 0;
  bool lost = false;
  for (;;) {
    if (::waitpid(child, &wait_status, WNOHANG) == child) break;
    const auto now = Clock::now();
    if (now >= lease_end) {
      lost = true;
    } else if (now >= next_renewal) {
      const auto sent = Clock::now();
      std::string error;
      auto renewed = Send(connection, Method::kPost, lock_target + "/renew", OwnerBody(owner),
                          std::max(renew_every, milliseconds(1)), &error);
      if (renewed && renewed->status == 200) {
        lease_end = sent + options.ttl;
      } else if (renewed && renewed->status == 410) {
        lost = true;
      } else {
        // A transient failure: retry soon; the lease end decides when to give up.
        std::cerr << "fencegate lock: renewal failed: "
                  << (renewed ? "HTTP " + std::to_string(renewed->status) : error) << std::endl;
      }
      next_renewal =
          Clock::now() + (renewed && renewed->status == 200 ? renew_every : renew_every / 4);
    }
    if (lost) {
      std::cerr << "fencegate lock: the lease on " << options.name
                << " was lost; stopping the command" << std::endl;
      wait_status = Stop(child, options.kill_grace);
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  g_child = 0;
  if (!lost) Call(connection, lock_target + "/release", OwnerBody(owner), milliseconds(5000));
  return StatusOf(wait_status);
}

}  // namespace

std::string LockUsageText() {
  return "Usage: fencegate lock acquire NAME [--ttl D] [--wait D] [OPTIONS]\n"
         "       fencegate lock renew NAME --owner TOKEN [OPTIONS]\n"
         "       fencegate lock release NAME --owner TOKEN [OPTIONS]\n"
         "       fencegate lock status NAME [OPTIONS]\n"
         "       fencegate lock run NAME [--ttl D] [--wait D] [--kill-grace D] [OPTIONS] -- CMD "
         "[ARG...]\n"
         "OPTIONS: [--url URL] [--api-key-file PATH] [--json] [--ca-file PATH]\n"
         "         [--client-cert-file PATH --client-key-file PATH] [--server-name NAME]\n"
         "         [--no-verify-hostname]\n"
         "\n"
         "A client of fencegate's built-in lock API. URL is the API's base, http:// or https://,\n"
         "default http://127.0.0.1:8080/locks/ (or $FENCEGATE_LOCK_URL); durations like 500ms,\n"
         "30s, 2m (--ttl default 30s, --wait default 0 = fail at once, --kill-grace default 5s);\n"
         "TOKEN defaults to $FENCEGATE_LOCK_OWNER_TOKEN. acquire/renew/release print the JSON "
         "answer.\n"
         "status prints the holder's id, its fencing token, the TTL left and the waiters (never\n"
         "an owner token); with --json, the lock API's JSON answer.\n"
         "--json: errors also as one JSON object on stdout ({\"ok\":false,\"exit_code\":N,...}).\n"
         "https://: the gateway's certificate must chain to --ca-file (default: the system store)\n"
         "and carry the URL's host (or --server-name); --no-verify-hostname skips the name check\n"
         "only. --client-cert-file/--client-key-file present a client certificate (mutual TLS).\n"
         "Under locks.policy: --api-key-file PATH (the key, one line) or $FENCEGATE_API_KEY is\n"
         "sent as Authorization: Bearer with every call (there is no argv option: ps shows it).\n"
         "run acquires, runs CMD with FENCING_TOKEN, FENCING_TOKEN_SIGNATURE (when the gateway\n"
         "signs tokens), FENCEGATE_LOCK_OWNER_TOKEN and FENCEGATE_LOCK_NAME set, renews every\n"
         "TTL/3, stops CMD (SIGTERM, then SIGKILL after the grace) if the lease is lost,\n"
         "releases when CMD exits, and exits with CMD's status.\n"
         "\n"
         "Exit codes: 0 ok, 1 lock held or lost, 2 usage error (also an unusable TLS file),\n"
         "3 failure (unreachable, TLS refused, server error); run: CMD's status.\n";
}

int RunLockCommand(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << LockUsageText();
    return kExitOk;
  }
  Options options;
  std::string error;
  LockApiConnection connection;
  if (!ParseArgs(args, &options, &error) ||
      !ParseLockApiUrl(options.url, &connection.url, &error)) {
    const int status = Fail(WantsJson(args), kExitUsage, error);
    std::cerr << "\n" << LockUsageText();
    return status;
  }
  connection.api_key = options.api_key;
  connection.tls_options = options.tls;
  if (!PrepareConnection(&connection, &error)) return Fail(options.json, kExitUsage, error);
  if (!options.tls.verify_hostname) {
    std::cerr << "fencegate lock: WARNING: --no-verify-hostname: the gateway's certificate is "
                 "checked against the CA only, not against its name"
              << std::endl;
  }
  if (options.verb == "run") return Run(options, connection);
  if (options.verb == "status") return Status(options, connection);

  const std::string lock_target = connection.url.prefix + options.name;
  std::optional<HttpAnswer> answer;
  if (options.verb == "acquire") {
    answer = Call(connection, lock_target, AcquireBody(options), options.wait + milliseconds(10000),
                  &error);
  } else {
    answer = Call(connection, lock_target + "/" + options.verb, OwnerBody(options.owner),
                  milliseconds(10000), &error);
  }
  if (!answer) return Fail(options.json, kExitFailed, error);
  if (answer->status != 200) return Refused(options, options.verb + " " + options.name, *answer);
  std::cout << answer->body << std::endl;
  return kExitOk;
}

}  // namespace fencegate::gateway::lock_client
