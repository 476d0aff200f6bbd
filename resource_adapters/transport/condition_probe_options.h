#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace fencegate::adapters {

// Whether a backend's conditional writes are checked before fenced writes rely on them
// (docs/BACKEND_TRUST.md). The s3 and webdav adapters' safety across gateways rests on the
// server honouring If-Match / If-None-Match (and, for webdav, LOCK and dead properties); several
// servers accept those headers and ignore them.
struct ConditionProbeOptions {
  enum class Policy {
    kVerify,  // probe; a backend (or bucket) found to ignore conditions gets no fenced writes
    kTrust,   // no probe; a warning at start and on reload says what is assumed
  };
  Policy policy = Policy::kVerify;
  // Scratch resources the probes write and delete, under the backend's root (s3: in each
  // probed bucket).
  std::string prefix = ".fencegate-probe/";
  // Verdicts are probed again this often (and on every reload: a reload builds new factories).
  std::chrono::milliseconds interval{std::chrono::minutes(10)};
  // s3: buckets probed at start, before any write names them. Others are probed before the
  // first fenced write to them (that write waits for the verdict).
  std::vector<std::string> buckets;
};

}  // namespace fencegate::adapters
