#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "resource_adapters/adapter.h"
#include "resource_adapters/webdav/dav_connection.h"
#include "resource_adapters/webdav/dav_connection_pool.h"
#include "resource_adapters/webdav/held_response.h"

namespace fencegate::adapters::webdav {

// One fenced write: LOCK every resource it changes (the request target, and the Destination of
// MOVE/COPY), PROPFIND the stored tokens and refuse if one is higher; where the write creates,
// removes or replaces a member of a collection (or the resource carries no token), also LOCK
// the parent collection (depth 0), check and store the member's token kept there (see
// member_property.h); PROPPATCH the new token, send the write itself through the passthrough
// adapter with the lock tokens in the If header, then UNLOCK, on every path, before `done`
// runs. While the locks are held no other gateway can change these resources or the parents'
// membership, so the token check and the write are one step at the server. Without
// `store_tokens` (a server without dead properties, under conditions: trust) only the LOCKs,
// the write and the UNLOCKs are sent: no token is read or stored at the server.
class FencedWrite : public std::enable_shared_from_this<FencedWrite> {
 public:
  FencedWrite(boost::asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend,
              std::shared_ptr<DavConnectionPool> pool, ResourceAdapter& passthrough,
              ForwardRequest request, Downstream& downstream, ResourceAdapter::DoneHandler done,
              bool store_tokens = true);

  void Start();

 private:
  struct Target {
    std::string path;
    std::string lock_token;  // "<opaquelocktoken:...>" once locked
    bool parent = false;     // a parent collection, locked with Depth: 0
    bool has_token = false;  // a resource whose own fencing-token property was found
  };
  // A resource target whose membership token is kept by a parent target.
  struct Member {
    std::size_t resource;
    std::size_t parent;
    std::string property;
  };
  using Response = DavConnection::Response;

  void Lock(std::size_t index);
  void OnLocked(std::size_t index, boost::system::error_code ec, const Response& response);
  // The first LOCK could not reach the server: nothing was sent, so the write starts over on
  // another server.
  void MoveToAnotherServer();
  // Ends the write before anything was sent to the server: no lock to release.
  void EndUnsent(ForwardOutcome outcome);
  void OnLockConflict(std::size_t index);
  // LOCK of targets_[index] again after lock_retry_delay.
  void RetryLockLater(std::size_t index);
  // A lock of this backend's own writes that none holds any more (own_locks.h), on `path`.
  struct Orphan {
    std::string path;
    std::string token;
  };
  // Looks for orphans in the way of targets_[index]'s LOCK, releases them, and LOCKs again (at
  // once when one was released).
  void FindOrphans(std::size_t index);
  void FindOrphansIn(std::size_t index, std::vector<std::string> paths, std::vector<Orphan> found);
  void ReleaseOrphans(std::size_t index, std::vector<Orphan> orphans, bool released);
  void AfterLocked(std::size_t index);
  void CheckStoredToken(std::size_t index);
  // Adds the parents whose member tokens this write must check and store; false if none.
  bool PlanMembers();
  bool ChangesMembership(std::size_t index) const;
  void CheckMemberToken(std::size_t index);
  void StoreMemberToken(std::size_t index);
  void StoreTokenBeforeWrite();
  void Write();
  void OnWritten(ForwardOutcome outcome);
  void OnLockLost(ForwardOutcome outcome);
  void StoreTokenAfterWrite(ForwardOutcome outcome);
  // Sends the PROPPATCH that stores the token as `property` of `target`; `on_done` gets the
  // HTTP status (0 on a connection error) and whether the property was set.
  void StoreToken(const Target& target, std::string_view property,
                  std::function<void(unsigned, bool)> on_done);
  // Reads the token property `property` of `path`: a problem when it cannot be read or is
  // higher than this write's token, else the value (nullopt when absent).
  void ReadToken(const std::string& path, std::string_view property,
                 std::function<void(std::optional<Problem>, std::optional<std::uint64_t>)> on_done);

  void Refuse(Problem problem);
  void FailUpstream(boost::system::error_code ec, const std::string& step);
  void UnlockFrom(std::size_t index, ForwardOutcome outcome);
  // UNLOCKs every lock from `index` on (failures are left to the lock's Timeout), then `then`.
  void ReleaseLocks(std::size_t index, std::function<void()> then);
  void Restart();
  void Finish(ForwardOutcome outcome);

  std::string Url(const std::string& path) const;
  std::string IfHeader() const;
  std::optional<Problem> TargetsFromRequest();

  std::shared_ptr<const WebdavBackend> backend_;
  ResourceAdapter& passthrough_;
  ForwardRequest request_;
  // The write's response, kept from the client until the locks are released.
  HeldResponse held_;
  ResourceAdapter::DoneHandler done_;
  const std::uint64_t token_;
  const bool store_tokens_;
  std::shared_ptr<DavConnectionPool> pool_;
  // The write's server, picked once: every step of the sequence and the write itself go there.
  ServerChoice choice_;
  std::shared_ptr<DavConnection> connection_;  // taken from pool_, given back at the end
  boost::asio::steady_timer retry_timer_;
  std::vector<Target> targets_;  // the resources first, then the parents
  std::size_t resource_count_ = 0;
  std::vector<Member> members_;
  unsigned lock_attempts_ = 0;  // LOCK attempts and restarts, bounded by lock_attempts
  bool token_stored_ = false;
};

}  // namespace fencegate::adapters::webdav
