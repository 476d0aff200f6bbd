#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "base/net/http_header.h"

#include "resource_adapters/adapter.h"
#include "resource_adapters/filesystem/conditional_request.h"
#include "resource_adapters/filesystem/file_store.h"
#include "resource_adapters/filesystem/live_writes.h"
#include "resource_adapters/filesystem/resource_path.h"

namespace fencegate::adapters {

class RelayBudget;

// What the exchanges of one filesystem backend share.
struct FilesystemBackend {
  FilesystemBackend(std::shared_ptr<FileStore> store_in,
                    boost::asio::thread_pool::executor_type io_in, std::size_t chunk_bytes_in,
                    std::shared_ptr<RelayBudget> relay_budget_in)
      : store(std::move(store_in)),
        io(std::move(io_in)),
        chunk_bytes(chunk_bytes_in),
        relay_budget(std::move(relay_budget_in)) {}

  std::shared_ptr<FileStore> store;
  // Blocking file work runs here; results come back to the exchange's network thread.
  boost::asio::thread_pool::executor_type io;
  std::size_t chunk_bytes;
  // limits.relay_buffer_memory, shared with every adapter; null: no limit.
  std::shared_ptr<RelayBudget> relay_budget;
  // I/O-thread jobs whose result is still to be handed back to a network thread: at shutdown
  // the network threads, and their inboxes, may go only once this is 0.
  mutable std::atomic<int> jobs_bound_for_network_threads{0};
};

// One request served from the file store. The network thread only moves buffers between the
// client and I/O-thread work; it never touches the disk.
class FileExchange : public std::enable_shared_from_this<FileExchange> {
 public:
  FileExchange(boost::asio::io_context& ioc, std::shared_ptr<const FilesystemBackend> backend,
               ResourcePath path, const ForwardRequest& request, Downstream& downstream,
               ResourceAdapter::DoneHandler done);
  virtual ~FileExchange() = default;

  virtual void Start() = 0;

 protected:
  // Runs `work` on an I/O thread, then `then(result)` on the network thread.
  template <typename Work, typename Then>
  void OnIoThread(Work work, Then then);

  void WriteHeaderOnly(ResponseHeader header);
  void FinishWithProblem(Problem problem);
  // A refusal of the gateway's own (no file touched), not a failure of the backend.
  void FinishRefused(Problem problem);
  void FinishFailed(ForwardOutcome::Failure failure, boost::system::error_code ec);
  void Complete();

  boost::asio::io_context& ioc_;
  std::shared_ptr<const FilesystemBackend> backend_;
  FileStore& store_;
  const ResourcePath path_;
  const http::verb method_;
  const ClientConditions conditions_;
  const std::optional<std::uint64_t> token_;
  Downstream& downstream_;
  ForwardOutcome outcome_;

 private:
  ResourceAdapter::DoneHandler done_;
};

// GET and HEAD: the file streamed in chunk_bytes pieces.
class ReadFileExchange : public FileExchange {
 public:
  using FileExchange::FileExchange;
  void Start() override;

 private:
  void OnOpened(OrProblem<OpenedFile> opened);
  void ReadNextChunk();
  void WriteChunk(std::size_t bytes);

  OpenedFile file_;
  ResponseHeader header_;
  std::vector<char> buffer_;
  std::uint64_t offset_ = 0;
};

// PUT: the body is streamed into a temp file through two buffers (one being filled from the
// client while the other is written to disk), then committed by rename.
class WriteFileExchange : public FileExchange {
 public:
  using FileExchange::FileExchange;
  ~WriteFileExchange() override;
  // `live` lists this upload while it holds its temp file (live_writes.h).
  void Start(LiveWrites& live);
  void Start() override;

  // Only once the network thread stopped (LiveWrites): removes the temp file unless an I/O
  // thread already owns it (commit or abandon under way).
  void RemoveTempFileAfterItsThreadStopped();

 private:
  struct Slot {
    // Allocated once body bytes are at hand for it (uninitialised: the kernel backs only the
    // pages the body fills), so a client slow to send holds no buffer while it pauses.
    std::unique_ptr<char[]> data;
    std::size_t size = 0;
    bool last = false;
  };

  void OnBegun(OrProblem<PendingWrite> begun);
  void ReadBodyInto(int slot);
  void ReadBodyIntoAllocated(int slot);
  void WriteSlot(int slot);
  void Commit();
  void RecordFailure(ForwardOutcome::Failure failure, boost::system::error_code ec,
                     std::optional<Problem> problem);
  // Called when something failed; finishes once no read or disk write is outstanding.
  void AbortWhenIdle();

  // No longer this thread's to remove once handed to an I/O thread (commit, abandon).
  void Unlist();

  PendingWrite write_;
  std::array<Slot, 2> slots_;
  std::size_t reserved_bytes_ = 0;  // the two slots' size, reserved in relay_budget
  bool read_in_flight_ = false;
  bool write_in_flight_ = false;
  std::optional<int> filled_slot_;  // read from the client, waiting for the disk
  // Failure state: the first error wins.
  bool aborting_ = false;
  bool abandoning_ = false;
  ForwardOutcome::Failure failure_ = ForwardOutcome::Failure::kNone;
  boost::system::error_code failure_error_;
  std::optional<Problem> failure_problem_;
  // Membership of LiveWrites' list.
  friend class LiveWrites;
  LiveWrites* live_ = nullptr;
  WriteFileExchange* live_prev_ = nullptr;
  WriteFileExchange* live_next_ = nullptr;
  LiveWrites* tracker_ = nullptr;  // the list to join once the temp file exists
};

// DELETE.
class DeleteFileExchange : public FileExchange {
 public:
  using FileExchange::FileExchange;
  void Start() override;
};

}  // namespace fencegate::adapters
