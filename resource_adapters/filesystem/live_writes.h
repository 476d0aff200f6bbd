#pragma once

namespace fencegate::adapters {

class WriteFileExchange;

// The uploads of one network thread that hold a temp file, as an intrusive list (no
// allocation per upload). An upload that a drain cuts never finishes: its thread stops, and
// its exchange, held by the handlers of its session, may never be destroyed. The adapter,
// destroyed after its thread stopped, removes their temp files through this list.
// Used on the network thread only (the destructor after it stopped): no lock.
class LiveWrites {
 public:
  LiveWrites() = default;
  LiveWrites(const LiveWrites&) = delete;
  LiveWrites& operator=(const LiveWrites&) = delete;
  // Removes the temp files of the uploads still listed.
  ~LiveWrites();

  void Add(WriteFileExchange& write);
  void Remove(WriteFileExchange& write);

 private:
  WriteFileExchange* head_ = nullptr;
};

}  // namespace fencegate::adapters
