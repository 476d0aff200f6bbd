#pragma once

#include <sys/types.h>

#include <string>

#include "lockstore/status.h"

namespace fencegate::gateway {

// The config's `user:`/`group:` (docs/OPERATIONS.md "Running as another user"): a gateway
// started as root binds its listeners as root and serves as the user.
//
// The steps, in Server::Start's order:
//  1. ActAsUser() before anything is opened: the effective ids become the user's, so the fence
//     store, the idempotency records, the access log and the key files are opened (and created)
//     with the rights the process keeps. A data dir the user cannot write fails the start now,
//     not at the first compaction, log rotation or certificate reload after the drop.
//  2. RegainRootToBind() just before the listeners are bound (a port below 1024 needs root).
//  3. DropForGood() after binding, before any network thread serves: real, effective and saved
//     ids all become the user's, the supplementary groups the user's, and it checks that root
//     cannot be regained.
// glibc applies set*id calls to every thread of the process, so the threads that exist by then
// (the store's, the lock clock's) change with the thread that calls.
class PrivilegeDrop {
 public:
  // Resolves `user` (a name or a numeric id) and `group` (default: the user's primary group).
  // Only a look-up: what --check-config checks, wherever it runs.
  static lockstore::Status Resolve(const std::string& user, const std::string& group,
                                   PrivilegeDrop* out);

  // Resolve(), then decides what the running process does: nothing without `user`, or when it
  // already runs as that user and group; the three steps when it runs as root; an error when
  // it is another user (it cannot become someone else, and running as the wrong account would
  // leave files the right one cannot write).
  static lockstore::Status Plan(const std::string& user, const std::string& group,
                                PrivilegeDrop* out);

  bool active() const { return active_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }

  lockstore::Status ActAsUser() const;
  lockstore::Status RegainRootToBind() const;
  lockstore::Status DropForGood() const;

 private:
  std::string user_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  bool active_ = false;
};

}  // namespace fencegate::gateway
