#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace fencegate::adapters {

// The memory of one network thread's exchanges, reused from exchange to exchange (no locking:
// exchanges are made and freed on that thread). An exchange with its shared_ptr control block
// is a block of a few KiB, above glibc's per-thread cache, so a fresh one per request costs a
// malloc and free through the main heap (several hundred instructions) for every request.
// Blocks of one size only, the first size asked for; any other size goes to operator new.
class ExchangeBlockPool {
 public:
  explicit ExchangeBlockPool(std::size_t max_idle) : max_idle_(max_idle) {}
  ~ExchangeBlockPool() {
    for (void* block : idle_) ::operator delete(block);
  }
  ExchangeBlockPool(const ExchangeBlockPool&) = delete;
  ExchangeBlockPool& operator=(const ExchangeBlockPool&) = delete;

  void* Take(std::size_t bytes) {
    if (block_bytes_ == 0) block_bytes_ = bytes;
    if (bytes != block_bytes_ || idle_.empty()) return ::operator new(bytes);
    void* block = idle_.back();
    idle_.pop_back();
    return block;
  }

  void Give(void* block, std::size_t bytes) {
    if (bytes != block_bytes_ || idle_.size() >= max_idle_) {
      ::operator delete(block);
      return;
    }
    idle_.push_back(block);
  }

  std::size_t idle() const { return idle_.size(); }

 private:
  const std::size_t max_idle_;
  std::size_t block_bytes_ = 0;
  std::vector<void*> idle_;
};

// For std::allocate_shared: the control block keeps a copy, and with it the pool, alive until
// the last exchange made from it is freed.
template <class T>
class ExchangeBlockAllocator {
 public:
  using value_type = T;

  explicit ExchangeBlockAllocator(std::shared_ptr<ExchangeBlockPool> pool)
      : pool_(std::move(pool)) {}
  template <class U>
  ExchangeBlockAllocator(const ExchangeBlockAllocator<U>& other) : pool_(other.pool()) {}

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    return static_cast<T*>(pool_->Take(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) { pool_->Give(p, n * sizeof(T)); }

  const std::shared_ptr<ExchangeBlockPool>& pool() const { return pool_; }

  template <class U>
  bool operator==(const ExchangeBlockAllocator<U>& other) const {
    return pool_ == other.pool();
  }

 private:
  std::shared_ptr<ExchangeBlockPool> pool_;
};

}  // namespace fencegate::adapters
