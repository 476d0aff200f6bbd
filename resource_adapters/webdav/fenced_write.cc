#include "resource_adapters/webdav/fenced_write.h"

#include <string>
#include <utility>

#include <boost/beast/core/error.hpp>

#include "base/log/event_log.h"
#include "resource_adapters/webdav/dav_xml.h"
#include "resource_adapters/webdav/member_property.h"

namespace fencegate::adapters::webdav {

namespace {

using boost::system::error_code;
using Failure = ForwardOutcome::Failure;

std::string WithoutQuery(std::string_view target) {
  return std::string(target.substr(0, target.find_first_of("?#")));
}

// The path of a Destination header: an absolute URI (RFC 4918 10.3) or, leniently, a path.
std::optional<std::string> DestinationPath(std::string_view destination) {
  const std::size_t scheme = destination.find("://");
  if (scheme != std::string_view::npos) {
    const std::size_t slash = destination.find('/', scheme + 3);
    if (slash == std::string_view::npos) return std::string("/");
    destination.remove_prefix(slash);
  }
  if (destination.empty() || destination.front() != '/') return std::nullopt;
  return WithoutQuery(destination);
}

std::string LockTimeoutValue(std::chrono::milliseconds timeout) {
  const auto seconds = (timeout.count() + 999) / 1000;
  return "Second-" + std::to_string(seconds < 1 ? 1 : seconds);
}

bool IsSuccess(unsigned status) { return status >= 200 && status < 300; }

// The token a granted LOCK names: its Lock-Token header, or for a server that leaves it out, the
// one lock token in its lockdiscovery.
std::optional<std::string> GrantedLockToken(const DavConnection::Response& response) {
  const auto header = response.find("Lock-Token");
  return header == response.end() ? ParseLockDiscoveryToken(response.body())
                                  : ParseLockTokenHeader(header->value());
}

// When a LOCK keeps conflicting, the attempts after which the write looks for orphaned locks of
// its own backend's writes in its way: early (an orphan blocks until its Timeout, and waiting
// cannot help), then now and then (an orphan can appear while the write waits), never on every
// attempt (a lock held by another write is the usual conflict, and costs no PROPFIND).
constexpr unsigned kFirstOrphanCheck = 3;
constexpr unsigned kOrphanCheckEvery = 20;

bool OrphanCheckDue(unsigned attempts) {
  return attempts == kFirstOrphanCheck ||
         (attempts > kFirstOrphanCheck && (attempts - kFirstOrphanCheck) % kOrphanCheckEvery == 0);
}

Problem LockLapsedProblem() {
  return Problem{503, "webdav-lock-lost", "Service Unavailable",
                 "the lock lapsed before the write reached the backend (lock_timeout too short "
                 "for this write?)"};
}

}  // namespace

FencedWrite::FencedWrite(boost::asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend,
                         std::shared_ptr<DavConnectionPool> pool, ResourceAdapter& passthrough,
                         ForwardRequest request, Downstream& downstream,
                         ResourceAdapter::DoneHandler done, bool store_tokens)
    : backend_(std::move(backend)),
      passthrough_(passthrough),
      request_(request),
      held_(ioc, downstream),
      done_(std::move(done)),
      token_(request.fencing_token.value_or(0)),
      store_tokens_(store_tokens),
      pool_(std::move(pool)),
      choice_(ioc, pool_->server_pools(), backend_->connect),
      retry_timer_(ioc) {}

std::optional<Problem> FencedWrite::TargetsFromRequest() {
  auto& header = *request_.header;
  // A client's own If header would be OR-ed with the gateway's lock condition (RFC 4918 10.4),
  // which would let the write through without the lock.
  if (header.find("If") != header.end()) {
    return Problem{400, "webdav-if-header-not-supported", "Bad Request",
                   "fenced writes on a webdav route carry the gateway's lock tokens in the If "
                   "header; a client's own If header is not forwarded"};
  }
  targets_.push_back({WithoutQuery(header.target()), {}});
  const http::verb method = header.method();
  if (method == http::verb::move || method == http::verb::copy) {
    const auto destination = header.find(http::field::destination);
    if (destination == header.end()) {
      return Problem{400, "missing-destination", "Bad Request",
                     "MOVE and COPY need a Destination header"};
    }
    const auto path = DestinationPath(destination->value());
    if (!path) {
      return Problem{400, "invalid-destination", "Bad Request",
                     "the Destination header is not an absolute URI or path"};
    }
    // The server checks that the destination is on itself, so it must name the server's own
    // address rather than the gateway's.
    header.set(http::field::destination, Url(*path));
    if (*path != targets_.front().path) targets_.push_back({*path, {}});
  }
  resource_count_ = targets_.size();
  return std::nullopt;
}

void FencedWrite::Start() {
  // Counted in flight at its server until the write itself goes out (the passthrough counts
  // that).
  if (std::optional<Problem> refused = choice_.Begin(request_.fence_key)) {
    ForwardOutcome outcome;
    if (refused->type == "no-healthy-backend") outcome.failure = Failure::kUpstreamConnect;
    outcome.problem = std::move(refused);
    return EndUnsent(std::move(outcome));
  }
  request_.server = choice_.server();
  connection_ = pool_->Take(choice_.server());
  if (auto problem = TargetsFromRequest()) {
    ForwardOutcome outcome;
    outcome.problem = std::move(problem);
    return EndUnsent(std::move(outcome));
  }
  Lock(0);
}

void FencedWrite::EndUnsent(ForwardOutcome outcome) {
  auto done = std::move(done_);
  done(std::move(outcome));
}

void FencedWrite::Lock(std::size_t index) {
  auto request = connection_->MakeRequest(http::verb::lock, targets_[index].path,
                                          LockRequestBody(backend_->own_locks->owner()));
  request.set("Timeout", LockTimeoutValue(backend_->options.lock_timeout));
  // On a parent, the collection itself (with its membership), not everything below it.
  if (targets_[index].parent) request.set("Depth", "0");
  request.prepare_payload();
  backend_->own_locks->Asking(targets_[index].path);
  connection_->Send(std::move(request),
                    [self = shared_from_this(), index](error_code ec, Response response) {
                      self->OnLocked(index, ec, response);
                    });
}

void FencedWrite::OnLocked(std::size_t index, error_code ec, const Response& response) {
  std::optional<std::string> granted;
  if (!ec && (response.result_int() == 200 || response.result_int() == 201)) {
    granted = GrantedLockToken(response);
  }
  backend_->own_locks->Answered(targets_[index].path, granted);
  if (ec && index == 0 && connection_->unreachable()) return MoveToAnotherServer();
  if (ec) return FailUpstream(ec, "LOCK");
  const unsigned status = response.result_int();
  // 207 with 423 inside: a LOCK of a missing resource would add a member to a collection that
  // another holder has locked (mod_dav answers so for the parent it checked).
  if (status == 423 || (status == 207 && MultistatusReportsLocked(response.body()))) {
    return OnLockConflict(index);
  }
  // Apache's mod_dav_fs answers a LOCK with 500 now and then when LOCKs and UNLOCKs race on its
  // lock database (docs/BACKEND_TRUST.md): retried as a conflict is, within lock_attempts.
  if ((status == 500 || status == 503) && lock_attempts_ + 1 < backend_->options.lock_attempts) {
    ++lock_attempts_;
    return RetryLockLater(index);
  }
  if (status != 200 && status != 201) {
    // A missing parent collection (409), a forbidden path (403) and the like: the write
    // would fail the same way, so the client learns it without the write being sent.
    return Refuse(Problem{
        status >= 400 && status < 500 ? status : 502u, "webdav-lock-refused",
        status >= 400 && status < 500 ? "Lock refused" : "Bad Gateway",
        "the backend answered LOCK " + targets_[index].path + " with " + std::to_string(status)});
  }
  if (!granted) {
    return Refuse(Problem{502, "webdav-lock-failed", "Bad Gateway",
                          "the backend's LOCK response has no valid Lock-Token header, nor one "
                          "lock token in its lockdiscovery"});
  }
  targets_[index].lock_token = std::move(*granted);
  AfterLocked(index);
}

// The resources are locked first, then (once their tokens tell which are needed) the parents.
void FencedWrite::AfterLocked(std::size_t index) {
  if (index + 1 < targets_.size()) return Lock(index + 1);
  if (!store_tokens_) return Write();
  if (index + 1 == resource_count_) return CheckStoredToken(0);
  CheckMemberToken(0);
}

// Someone else holds a lock on the resource: usually another gateway's fenced write. If that
// write already stored a higher token, this one is stale and waiting cannot help.
void FencedWrite::OnLockConflict(std::size_t index) {
  // A parent's own token belongs to the parent's writes (another fence key): not read here.
  const std::string_view property = targets_[index].parent || !store_tokens_ ? "" : kTokenProperty;
  auto retry = [self = shared_from_this(), index](std::optional<Problem> problem,
                                                  std::optional<std::uint64_t>) {
    if (problem) return self->Refuse(std::move(*problem));
    if (++self->lock_attempts_ >= self->backend_->options.lock_attempts) {
      return self->Refuse(Problem{503, "webdav-resource-locked", "Service Unavailable",
                                  "the backend kept " + self->targets_[index].path +
                                      " locked through " + std::to_string(self->lock_attempts_) +
                                      " LOCK attempts"});
    }
    if (OrphanCheckDue(self->lock_attempts_)) return self->FindOrphans(index);
    self->RetryLockLater(index);
  };
  if (property.empty()) return retry(std::nullopt, std::nullopt);
  ReadToken(targets_[index].path, property, std::move(retry));
}

// The lock in the way is on the resource, or (for a missing resource, whose creation a
// depth-0 LOCK of its parent stops, as the fenced writes take) on its parent.
void FencedWrite::FindOrphans(std::size_t index) {
  std::vector<std::string> paths{targets_[index].path};
  if (auto member = MemberPropertyOf(targets_[index].path)) paths.push_back(member->parent);
  FindOrphansIn(index, std::move(paths), {});
}

void FencedWrite::FindOrphansIn(std::size_t index, std::vector<std::string> paths,
                                std::vector<Orphan> found) {
  if (paths.empty()) return ReleaseOrphans(index, std::move(found), false);
  const std::string path = std::move(paths.back());
  paths.pop_back();
  auto request = connection_->MakeRequest(http::verb::propfind, path, PropfindLockDiscoveryBody());
  request.set("Depth", "0");
  connection_->Send(std::move(request),
                    [self = shared_from_this(), index, path, paths = std::move(paths),
                     found = std::move(found)](error_code ec, Response response) mutable {
                      if (ec) return self->FailUpstream(ec, "PROPFIND lockdiscovery");
                      if (response.result_int() == 207) {
                        const OwnLocks& own = *self->backend_->own_locks;
                        for (ActiveLock& lock : ParseActiveLocks(response.body())) {
                          if (lock.owner == own.owner() && own.IsOrphan(path, lock.token)) {
                            found.push_back({path, std::move(lock.token)});
                          }
                        }
                      }
                      self->FindOrphansIn(index, std::move(paths), std::move(found));
                    });
}

// Released in the order found: the parent's (looked at first) before the resource's, since a
// missing resource's lock can only be removed from an unlocked parent.
void FencedWrite::ReleaseOrphans(std::size_t index, std::vector<Orphan> orphans, bool released) {
  if (orphans.empty()) return released ? Lock(index) : RetryLockLater(index);
  Orphan orphan = std::move(orphans.front());
  orphans.erase(orphans.begin());
  auto request = connection_->MakeRequest(http::verb::unlock, orphan.path, {});
  request.set("Lock-Token", orphan.token);
  connection_->Send(std::move(request),
                    [self = shared_from_this(), index, orphan, orphans = std::move(orphans),
                     released](error_code ec, Response response) mutable {
                      if (ec) return self->FailUpstream(ec, "UNLOCK of an orphaned lock");
                      const bool ok = IsSuccess(response.result_int());
                      if (ok) {
                        self->backend_->servers->CountOrphanedLockReleased();
                        log::Warn("backend '" + self->backend_->servers->backend_name() +
                                      "': released an orphaned lock of this gateway's writes on " +
                                      orphan.path + " (its UNLOCK was lost, or its LOCK's answer)",
                                  {{"backend", self->backend_->servers->backend_name()},
                                   {"path", orphan.path},
                                   {"lock_token", orphan.token}});
                      }
                      self->ReleaseOrphans(index, std::move(orphans), released || ok);
                    });
}

void FencedWrite::RetryLockLater(std::size_t index) {
  retry_timer_.expires_after(backend_->options.lock_retry_delay);
  retry_timer_.async_wait([self = shared_from_this(), index](error_code ec) {
    if (ec) return self->FailUpstream(ec, "LOCK retry");
    self->Lock(index);
  });
}

void FencedWrite::CheckStoredToken(std::size_t index) {
  if (index == resource_count_) {
    if (PlanMembers()) return Lock(resource_count_);
    return StoreTokenBeforeWrite();
  }
  ReadToken(targets_[index].path, kTokenProperty,
            [self = shared_from_this(), index](std::optional<Problem> problem,
                                               std::optional<std::uint64_t> stored) {
              if (problem) return self->Refuse(std::move(*problem));
              self->targets_[index].has_token = stored.has_value();
              self->CheckStoredToken(index + 1);
            });
}

// DELETE and MKCOL change their target's membership, MOVE both its source's and its
// destination's, COPY its destination's. A PUT replaces a resource in place unless it creates
// it; one without a token of its own (new, or written around the gateways) is checked against
// its parent too, so a resource deleted under a higher token cannot come back with a lower one.
bool FencedWrite::ChangesMembership(std::size_t index) const {
  switch (request_.header->method()) {
    case http::verb::delete_:
    case http::verb::mkcol:
    case http::verb::move:
      return true;
    case http::verb::copy:
      return index == 1;
    default:
      return !targets_[index].has_token;
  }
}

bool FencedWrite::PlanMembers() {
  const auto same_path = [](std::string_view a, std::string_view b) {
    while (a.size() > 1 && a.back() == '/') a.remove_suffix(1);
    while (b.size() > 1 && b.back() == '/') b.remove_suffix(1);
    return a == b;
  };
  for (std::size_t i = 0; i < resource_count_; ++i) {
    if (!ChangesMembership(i)) continue;
    auto member = MemberPropertyOf(targets_[i].path);
    if (!member) continue;  // the server's root: no parent to keep it
    // One lock per parent; a parent that is itself a target (MOVE into a sibling of itself)
    // is already locked.
    std::size_t parent = 0;
    while (parent < targets_.size() && !same_path(targets_[parent].path, member->parent)) {
      ++parent;
    }
    if (parent == targets_.size()) targets_.push_back({member->parent, {}, true, false});
    members_.push_back({i, parent, std::move(member->property)});
  }
  return targets_.size() > resource_count_;
}

void FencedWrite::CheckMemberToken(std::size_t index) {
  if (index == members_.size()) return StoreMemberToken(0);
  const Member& member = members_[index];
  ReadToken(targets_[member.parent].path, member.property,
            [self = shared_from_this(), index](std::optional<Problem> problem,
                                               std::optional<std::uint64_t>) {
              if (problem) return self->Refuse(std::move(*problem));
              self->CheckMemberToken(index + 1);
            });
}

// Before the write, like the resource's own token: a crash in between leaves the parent
// remembering a token that refuses more, never less.
void FencedWrite::StoreMemberToken(std::size_t index) {
  if (index == members_.size()) return StoreTokenBeforeWrite();
  const Member& member = members_[index];
  StoreToken(targets_[member.parent], member.property,
             [self = shared_from_this(), index](unsigned status, bool stored) {
               if (stored) return self->StoreMemberToken(index + 1);
               if (status == 412 || status == 423) return self->Restart();
               self->Refuse(Problem{502, "webdav-token-not-stored", "Bad Gateway",
                                    "the backend answered PROPPATCH of a member token with " +
                                        std::to_string(status) + " before the write"});
             });
}

void FencedWrite::ReadToken(
    const std::string& path, std::string_view property,
    std::function<void(std::optional<Problem>, std::optional<std::uint64_t>)> on_done) {
  auto request = connection_->MakeRequest(http::verb::propfind, path, PropfindTokenBody(property));
  request.set("Depth", "0");
  const bool member = property != kTokenProperty;
  connection_->Send(
      std::move(request), [self = shared_from_this(), path, property = std::string(property),
                           member, on_done = std::move(on_done)](error_code ec, Response response) {
        if (ec) return self->FailUpstream(ec, "PROPFIND");
        const unsigned status = response.result_int();
        if (status == 404) return on_done(std::nullopt, std::nullopt);
        if (status != 207) {
          return on_done(
              Problem{502, "webdav-token-unreadable", "Bad Gateway",
                      "the backend answered PROPFIND " + path + " with " + std::to_string(status)},
              std::nullopt);
        }
        const StoredToken stored = ParseStoredToken(response.body(), property);
        if (stored.kind == StoredToken::Kind::kUnreadable) {
          return on_done(
              Problem{502, "webdav-token-unreadable", "Bad Gateway",
                      "the backend's PROPFIND answer for " + path + " is not well-formed XML"},
              std::nullopt);
        }
        if (stored.kind == StoredToken::Kind::kMalformed) {
          return on_done(Problem{502, "webdav-token-unreadable", "Bad Gateway",
                                 "the " + property + " property of " + path + " is not a number"},
                         std::nullopt);
        }
        if (stored.kind == StoredToken::Kind::kAbsent) return on_done(std::nullopt, std::nullopt);
        if (stored.value > self->token_) {
          const std::string what =
              member ? "a member of " + path + " was created or removed" : path + " was written";
          return on_done(Problem{409, std::string(kStaleAtBackendProblemType), "Conflict",
                                 what + " with fencing token " + std::to_string(stored.value) +
                                     ", newer than " + std::to_string(self->token_)},
                         stored.value);
        }
        on_done(std::nullopt, stored.value);
      });
}

// The token goes on first where it can: if the gateway dies between the two steps, the
// resource then carries the newer token with the older content, which refuses more rather than
// less. A resource that does not exist yet (a lock-null resource) takes no properties, so a new
// resource gets its token right after the write instead, still under the lock.
void FencedWrite::StoreTokenBeforeWrite() {
  if (request_.header->method() != http::verb::put) return Write();
  StoreToken(targets_.front(), kTokenProperty,
             [self = shared_from_this()](unsigned status, bool stored) {
               if (stored) {
                 self->token_stored_ = true;
               } else if (status == 412 || status == 423) {
                 return self->Restart();
               } else if (status != 404) {
                 return self->Refuse(Problem{502, "webdav-token-not-stored", "Bad Gateway",
                                             "the backend answered PROPPATCH with " +
                                                 std::to_string(status) + " before the write"});
               }
               self->Write();
             });
}

void FencedWrite::StoreToken(const Target& target, std::string_view property,
                             std::function<void(unsigned, bool)> on_done) {
  auto request = connection_->MakeRequest(http::verb::proppatch, target.path,
                                          ProppatchTokenBody(token_, property));
  request.set("If", "(" + target.lock_token + ")");
  connection_->Send(
      std::move(request), [property = std::string(property), on_done = std::move(on_done)](
                              error_code ec, Response response) {
        if (ec) return on_done(0, false);
        const unsigned status = response.result_int();
        on_done(status, status == 207 && ProppatchSucceeded(response.body(), property));
      });
}

void FencedWrite::Write() {
  request_.header->set("If", IfHeader());
  choice_.End();
  passthrough_.Forward(request_, held_, [self = shared_from_this()](ForwardOutcome outcome) {
    self->OnWritten(std::move(outcome));
  });
}

void FencedWrite::OnWritten(ForwardOutcome outcome) {
  if (!held_.complete()) {
    // The passthrough failed before or while the response came; nothing reached the client.
    if (outcome.response_started) {
      outcome.response_started = false;
      outcome.response_complete = false;
      if (outcome.failure == Failure::kNone || outcome.failure == Failure::kClient) {
        outcome.failure = Failure::kUpstreamProtocol;
      }
      outcome.problem = Problem{502, "upstream-protocol-error", "Bad Gateway",
                                "the backend's response to the write was cut short or too large"};
    }
    return UnlockFrom(0, std::move(outcome));
  }
  // 412 is the client's own condition failing when it sent one; otherwise it, like 423, means
  // the server no longer honours this write's lock token.
  const bool client_conditions =
      request_.header->find(http::field::if_match) != request_.header->end() ||
      request_.header->find(http::field::if_none_match) != request_.header->end() ||
      request_.header->find(http::field::if_unmodified_since) != request_.header->end();
  if (held_.status() == 423 || (held_.status() == 412 && !client_conditions)) {
    return OnLockLost(std::move(outcome));
  }
  const http::verb method = request_.header->method();
  if (!IsSuccess(held_.status()) || method == http::verb::delete_ || token_stored_ ||
      !store_tokens_) {
    return UnlockFrom(0, std::move(outcome));
  }
  StoreTokenAfterWrite(std::move(outcome));
}

// The server refused the write's lock token although this write held the lock: the lock lapsed
// (the write took longer than lock_timeout), or a racing LOCK replaced it. Nothing was written;
// the body is gone, so the write is not retried: stale if the other holder stored a higher
// token, else 503.
void FencedWrite::OnLockLost(ForwardOutcome outcome) {
  auto shared_outcome = std::make_shared<ForwardOutcome>(std::move(outcome));
  if (!store_tokens_) {
    shared_outcome->response_started = false;
    shared_outcome->response_complete = false;
    shared_outcome->problem = LockLapsedProblem();
    return UnlockFrom(0, std::move(*shared_outcome));
  }
  ReadToken(targets_.front().path, kTokenProperty,
            [self = shared_from_this(), shared_outcome](std::optional<Problem> problem,
                                                        std::optional<std::uint64_t>) {
              ForwardOutcome& result = *shared_outcome;
              result.response_started = false;
              result.response_complete = false;
              result.problem = problem ? std::move(*problem) : LockLapsedProblem();
              self->UnlockFrom(0, std::move(result));
            });
}

// The locks are still held, so the token is in place before any other gateway can write. A
// failure here leaves no token with the new content: the gateways' fences still hold, only the
// server-side check is weaker.
void FencedWrite::StoreTokenAfterWrite(ForwardOutcome outcome) {
  auto shared_outcome = std::make_shared<ForwardOutcome>(std::move(outcome));
  StoreToken(targets_[resource_count_ - 1], kTokenProperty,
             [self = shared_from_this(), shared_outcome](unsigned, bool) {
               self->UnlockFrom(0, std::move(*shared_outcome));
             });
}

void FencedWrite::MoveToAnotherServer() {
  const Problem unreachable = *connection_->unreachable();
  pool_->Give(std::move(connection_));
  if (std::optional<Problem> refused = choice_.MoveAfterUnreachable()) {
    // A refused certificate is a configuration to fix, not a server to wait for (as
    // ServerChoice answers the other adapters).
    if (unreachable.type == "upstream-tls-failed" && refused->type == "no-healthy-backend") {
      refused = unreachable;
    }
    ForwardOutcome outcome;
    outcome.failure = Failure::kUpstreamConnect;
    outcome.upstream_server = choice_.server_url();
    outcome.problem = std::move(refused);
    return EndUnsent(std::move(outcome));
  }
  request_.server = choice_.server();
  connection_ = pool_->Take(choice_.server());
  Lock(0);
}

void FencedWrite::Refuse(Problem problem) {
  ForwardOutcome outcome;
  outcome.backend_reached = true;
  outcome.problem = std::move(problem);
  UnlockFrom(0, std::move(outcome));
}

void FencedWrite::FailUpstream(error_code ec, const std::string& step) {
  ForwardOutcome outcome;
  outcome.backend_reached = true;
  outcome.error = ec;
  const std::string backend(choice_.server_url());
  outcome.upstream_server = choice_.server_url();
  if (ec == boost::beast::error::timeout) {
    outcome.failure = Failure::kUpstreamTimeout;
    outcome.problem = Problem{504, "upstream-timeout", "Gateway Timeout",
                              "backend " + backend + " did not answer " + step + " in time"};
  } else {
    outcome.failure = Failure::kUpstreamConnect;
    outcome.problem = Problem{502, "upstream-connect-failed", "Bad Gateway",
                              step + " to backend " + backend + " failed: " + ec.message()};
  }
  UnlockFrom(0, std::move(outcome));
}

// Releases every lock taken, whatever happened; an UNLOCK that fails (the resource was
// deleted or moved away, the server is gone) is left to the lock's short Timeout.
void FencedWrite::UnlockFrom(std::size_t index, ForwardOutcome outcome) {
  auto shared_outcome = std::make_shared<ForwardOutcome>(std::move(outcome));
  ReleaseLocks(index, [self = shared_from_this(), shared_outcome] {
    self->pool_->Give(std::move(self->connection_));
    self->Finish(std::move(*shared_outcome));
  });
}

void FencedWrite::ReleaseLocks(std::size_t index, std::function<void()> then) {
  while (index < targets_.size() && targets_[index].lock_token.empty()) ++index;
  if (index == targets_.size()) return then();
  auto request = connection_->MakeRequest(http::verb::unlock, targets_[index].path, {});
  request.set("Lock-Token", targets_[index].lock_token);
  // Unlocking a resource that does not exist (a lock-null resource: a refused create) removes
  // it from its parent, which mod_dav allows only with the parent's lock token while this
  // write holds the parent: every lock still held goes along, as for the write.
  request.set("If", IfHeader());
  std::string token = std::move(targets_[index].lock_token);
  targets_[index].lock_token.clear();
  connection_->Send(std::move(request), [self = shared_from_this(), index, token = std::move(token),
                                         then = std::move(then)](error_code, Response) mutable {
    // Answered or not, this write no longer holds it: a lock the server kept is an orphan.
    self->backend_->own_locks->Released(token);
    self->ReleaseLocks(index + 1, std::move(then));
  });
}

// Apache's mod_dav_fs can grant one exclusive lock twice when two LOCKs race (its lock database
// is read and then written without a lock between), and the later grant replaces the earlier
// one: this write then finds its lock token refused (412) before anything was written. The
// body has not been read yet, so the whole sequence starts again, bounded by lock_attempts.
void FencedWrite::Restart() {
  if (++lock_attempts_ >= backend_->options.lock_attempts) {
    return Refuse(Problem{503, "webdav-lock-lost", "Service Unavailable",
                          "the backend kept refusing this write's lock token after LOCK"});
  }
  ReleaseLocks(0, [self = shared_from_this()] {
    // The parents are planned again from the tokens found after the new LOCKs.
    self->targets_.resize(self->resource_count_);
    self->members_.clear();
    self->retry_timer_.expires_after(self->backend_->options.lock_retry_delay);
    self->retry_timer_.async_wait([self](error_code ec) {
      if (ec) return self->FailUpstream(ec, "LOCK retry");
      self->Lock(0);
    });
  });
}

// The client gets the write's response now, after the locks were released.
void FencedWrite::Finish(ForwardOutcome outcome) {
  if (!outcome.response_started || !held_.complete()) {
    auto done = std::move(done_);
    done(std::move(outcome));
    return;
  }
  auto shared_outcome = std::make_shared<ForwardOutcome>(std::move(outcome));
  held_.Release([self = shared_from_this(), shared_outcome](error_code ec) {
    ForwardOutcome& result = *shared_outcome;
    result.response_complete = !ec;
    if (ec) {
      result.failure = Failure::kClient;
      result.error = ec;
    }
    auto done = std::move(self->done_);
    done(std::move(result));
  });
}

std::string FencedWrite::Url(const std::string& path) const {
  const ServerAddress& address = backend_->servers->address(choice_.server());
  return "http://" + address.host + ":" + std::to_string(address.port) + path;
}

// Tagged lists (RFC 4918 10.4.2), one per locked resource: each names the resource it applies
// to, so MOVE/COPY can present the locks of both source and destination.
std::string FencedWrite::IfHeader() const {
  std::string value;
  for (const Target& target : targets_) {
    if (target.lock_token.empty()) continue;
    if (!value.empty()) value += ' ';
    value += "<" + Url(target.path) + "> (" + target.lock_token + ")";
  }
  return value;
}

}  // namespace fencegate::adapters::webdav
