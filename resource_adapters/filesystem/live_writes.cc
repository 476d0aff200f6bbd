#include "resource_adapters/filesystem/live_writes.h"

#include "resource_adapters/filesystem/filesystem_exchanges.h"

namespace fencegate::adapters {

LiveWrites::~LiveWrites() {
  while (head_ != nullptr) {
    WriteFileExchange& write = *head_;
    Remove(write);
    write.RemoveTempFileAfterItsThreadStopped();
  }
}

void LiveWrites::Add(WriteFileExchange& write) {
  write.live_ = this;
  write.live_prev_ = nullptr;
  write.live_next_ = head_;
  if (head_ != nullptr) head_->live_prev_ = &write;
  head_ = &write;
}

void LiveWrites::Remove(WriteFileExchange& write) {
  if (write.live_ != this) return;
  (write.live_prev_ != nullptr ? write.live_prev_->live_next_ : head_) = write.live_next_;
  if (write.live_next_ != nullptr) write.live_next_->live_prev_ = write.live_prev_;
  write.live_ = nullptr;
  write.live_prev_ = write.live_next_ = nullptr;
}

}  // namespace fencegate::adapters
