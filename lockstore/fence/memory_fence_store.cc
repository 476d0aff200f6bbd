#include "lockstore/fence/memory_fence_store.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace fencegate::lockstore {
namespace {

// Enough history for any test; bounded so a long-running test cannot grow it without limit.
constexpr std::size_t kRejectionRetention = 10000;

struct QueuedAdvance {
  std::string key;
  Token token = 0;
  std::int64_t now_ms = 0;
  FenceStore::AdvanceCallback callback;
};

}  // namespace

class MemoryFenceStore::Impl {
 public:
  std::optional<FenceRecord> Read(std::string_view key) {
    std::lock_guard lock(mu_);
    if (auto it = fences_.find(key); it != fences_.end()) return it->second;
    return std::nullopt;
  }

  void Advance(std::string_view key, Token token, std::int64_t now_ms, AdvanceCallback callback) {
    QueuedAdvance advance{std::string(key), token, now_ms, std::move(callback)};
    {
      std::lock_guard lock(mu_);
      ++advance_calls_;
      if (deferred_) {
        queue_.push_back(std::move(advance));
        return;
      }
    }
    Apply(advance);
  }

  void RecordRejection(RejectionRecord record) {
    std::lock_guard lock(mu_);
    record.sequence = next_sequence_++;
    rejections_.push_back(std::move(record));
    if (rejections_.size() > kRejectionRetention) rejections_.pop_front();
  }

  std::vector<RejectionRecord> RecentRejections(std::size_t limit) {
    std::lock_guard lock(mu_);
    const std::size_t n = std::min(limit, rejections_.size());
    return {rejections_.rbegin(), rejections_.rbegin() + static_cast<std::ptrdiff_t>(n)};
  }

  RejectionPage QueryRejections(const RejectionQuery& query) {
    std::lock_guard lock(mu_);
    return QueryRejectionTrail(rejections_, query);
  }

  FencePage ListFences(std::string_view prefix, std::string_view after, std::size_t limit) {
    std::lock_guard lock(mu_);
    FencePage page;
    auto it =
        after.empty() || after < prefix ? fences_.lower_bound(prefix) : fences_.upper_bound(after);
    for (; it != fences_.end() && std::string_view(it->first).starts_with(prefix); ++it) {
      if (page.fences.size() == limit) {
        page.more = true;
        break;
      }
      page.fences.push_back({it->first, it->second});
    }
    return page;
  }

  // Inline, like Get: the tests that need a repair to wait hold writes in flight instead.
  void Repair(FenceRepairRecord record, RepairCallback callback) {
    Status status;
    {
      std::lock_guard lock(mu_);
      auto it = fences_.find(record.fence_key);
      if (it == fences_.end()) {
        status = Status::NotFound("fence key was never fenced");
      } else if (record.new_highest >= it->second.highest) {
        status = Status::InvalidArgument("a repair only lowers a fence");
      } else {
        record.previous_highest = it->second.highest;
        record.sequence = repairs_.size() + 1;
        it->second = {record.new_highest, record.at_ms};
        repairs_.push_back(record);
      }
    }
    callback(status, std::move(record));
  }

  std::vector<FenceRepairRecord> RecentRepairs(std::size_t limit) {
    std::lock_guard lock(mu_);
    const std::size_t n = std::min(limit, repairs_.size());
    return {repairs_.rbegin(), repairs_.rbegin() + static_cast<std::ptrdiff_t>(n)};
  }

  void SetDeferred(bool deferred) {
    std::lock_guard lock(mu_);
    deferred_ = deferred;
  }

  std::size_t RunPending() {
    std::deque<QueuedAdvance> batch;
    {
      std::lock_guard lock(mu_);
      batch.swap(queue_);
    }
    for (QueuedAdvance& advance : batch) Apply(advance);
    return batch.size();
  }

  void FailNextAdvances(Status status) {
    std::lock_guard lock(mu_);
    failure_ = std::move(status);
  }

  std::size_t advance_calls() const {
    std::lock_guard lock(mu_);
    return advance_calls_;
  }

  std::map<std::string, std::string> ReadRouteBindings() {
    std::lock_guard lock(mu_);
    return route_bindings_;
  }

  void WriteRouteBindings(const std::map<std::string, std::string>& bindings) {
    std::lock_guard lock(mu_);
    for (const auto& [route, binding] : bindings) route_bindings_[route] = binding;
  }

  bool HasFenceWithPrefix(std::string_view prefix) {
    std::lock_guard lock(mu_);
    const auto it = fences_.lower_bound(prefix);
    return it != fences_.end() && std::string_view(it->first).starts_with(prefix);
  }

 private:
  // Applies one advance and calls back outside the lock, as a real store's thread would.
  void Apply(QueuedAdvance& advance) {
    Status status;
    FenceRecord result;
    {
      std::lock_guard lock(mu_);
      status = failure_;
      if (status.ok()) {
        FenceRecord& record = fences_[advance.key];
        if (advance.token > record.highest) record = {advance.token, advance.now_ms};
        result = record;
      }
    }
    advance.callback(status, result);
  }

  mutable std::mutex mu_;
  std::map<std::string, FenceRecord, std::less<>> fences_;
  std::map<std::string, std::string> route_bindings_;
  std::deque<RejectionRecord> rejections_;
  std::vector<FenceRepairRecord> repairs_;
  std::uint64_t next_sequence_ = 1;
  std::deque<QueuedAdvance> queue_;
  bool deferred_ = false;
  Status failure_;
  std::size_t advance_calls_ = 0;
};

MemoryFenceStore::MemoryFenceStore() : impl_(std::make_unique<Impl>()) {}
MemoryFenceStore::~MemoryFenceStore() = default;

void MemoryFenceStore::Get(std::string_view key, GetCallback callback) {
  callback(Status::Ok(), impl_->Read(key));
}

std::optional<FenceStore::LocalRead> MemoryFenceStore::ReadLocal(std::string_view key) {
  return LocalRead{Status::Ok(), impl_->Read(key)};
}

void MemoryFenceStore::Advance(std::string_view key, Token token, std::int64_t now_ms,
                               AdvanceCallback callback) {
  impl_->Advance(key, token, now_ms, std::move(callback));
}

void MemoryFenceStore::RecordRejection(RejectionRecord record) {
  impl_->RecordRejection(std::move(record));
}

std::vector<RejectionRecord> MemoryFenceStore::RecentRejections(std::size_t limit) {
  return impl_->RecentRejections(limit);
}

RejectionPage MemoryFenceStore::QueryRejections(const RejectionQuery& query) {
  return impl_->QueryRejections(query);
}

Status MemoryFenceStore::ListFences(std::string_view prefix, std::string_view after,
                                    std::size_t limit, FencePage* page) {
  *page = impl_->ListFences(prefix, after, limit);
  return Status::Ok();
}

void MemoryFenceStore::Repair(FenceRepairRecord record, RepairCallback callback) {
  impl_->Repair(std::move(record), std::move(callback));
}

std::vector<FenceRepairRecord> MemoryFenceStore::RecentRepairs(std::size_t limit) {
  return impl_->RecentRepairs(limit);
}

Status MemoryFenceStore::Flush() { return Status::Ok(); }
bool MemoryFenceStore::Ready() const { return true; }

Status MemoryFenceStore::ReadRouteBindings(std::map<std::string, std::string>* out) {
  *out = impl_->ReadRouteBindings();
  return Status::Ok();
}

Status MemoryFenceStore::WriteRouteBindings(const std::map<std::string, std::string>& bindings) {
  impl_->WriteRouteBindings(bindings);
  return Status::Ok();
}

Status MemoryFenceStore::HasFenceWithPrefix(std::string_view prefix, bool* found) {
  *found = impl_->HasFenceWithPrefix(prefix);
  return Status::Ok();
}

void MemoryFenceStore::SetDeferred(bool deferred) { impl_->SetDeferred(deferred); }
std::size_t MemoryFenceStore::RunPending() { return impl_->RunPending(); }
void MemoryFenceStore::FailNextAdvances(Status status) {
  impl_->FailNextAdvances(std::move(status));
}
std::size_t MemoryFenceStore::advance_calls() const { return impl_->advance_calls(); }

}  // namespace fencegate::lockstore
