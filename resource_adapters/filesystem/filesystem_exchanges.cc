#include "resource_adapters/filesystem/filesystem_exchanges.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

#include <boost/asio/post.hpp>

#include "base/net/thread_inbox.h"
#include "resource_adapters/relay_budget.h"

namespace fencegate::adapters {

namespace {

using Failure = ForwardOutcome::Failure;

constexpr std::string_view kTokenField = "Fencing-Token";

boost::system::error_code ToBoost(std::error_code ec) {
  return boost::system::error_code(ec.value(), boost::system::system_category());
}

// The fields that describe a file version: ETag, Last-Modified and the token that wrote it.
void SetVersionFields(const FileVersion& version, ResponseHeader& header) {
  header.set(http::field::etag, version.etag);
  header.set(http::field::last_modified, version.last_modified);
  if (version.token) {
    header.set(kTokenField, std::to_string(*version.token));
  }
}

std::size_t SlotBytes(const FilesystemBackend& backend) {
  return std::max<std::size_t>(1, backend.chunk_bytes);
}

}  // namespace

FileExchange::FileExchange(boost::asio::io_context& ioc,
                           std::shared_ptr<const FilesystemBackend> backend, ResourcePath path,
                           const ForwardRequest& request, Downstream& downstream,
                           ResourceAdapter::DoneHandler done)
    : ioc_(ioc),
      backend_(std::move(backend)),
      store_(*backend_->store),
      path_(std::move(path)),
      method_(request.header->method()),
      conditions_(ClientConditions::FromHeader(*request.header)),
      token_(request.fencing_token),
      downstream_(downstream),
      done_(std::move(done)) {}

template <typename Work, typename Then>
void FileExchange::OnIoThread(Work work, Then then) {
  std::atomic<int>& jobs = backend_->jobs_bound_for_network_threads;
  jobs.fetch_add(1, std::memory_order_relaxed);
  boost::asio::post(
      backend_->io, [&ioc = ioc_, &jobs, work = std::move(work), then = std::move(then)]() mutable {
        auto result = work();
        PostToThread(ioc, [result = std::move(result), then = std::move(then)]() mutable {
          then(std::move(result));
        });
        if (jobs.fetch_sub(1, std::memory_order_release) == 1) jobs.notify_all();
      });
}

void FileExchange::WriteHeaderOnly(ResponseHeader header) {
  outcome_.status = header.result_int();
  outcome_.response_started = true;
  downstream_.AsyncWriteResponse(std::move(header), {}, true,
                                 [this, self = shared_from_this()](boost::system::error_code ec) {
                                   if (ec) {
                                     FinishFailed(Failure::kClient, ec);
                                     return;
                                   }
                                   Complete();
                                 });
}

void FileExchange::FinishWithProblem(Problem problem) {
  outcome_.failure = problem.status >= 500 ? Failure::kBackendIO : Failure::kNone;
  outcome_.problem = std::move(problem);
  auto done = std::move(done_);
  done(std::move(outcome_));
}

void FileExchange::FinishRefused(Problem problem) {
  outcome_.problem = std::move(problem);
  auto done = std::move(done_);
  done(std::move(outcome_));
}

void FileExchange::FinishFailed(Failure failure, boost::system::error_code ec) {
  outcome_.failure = failure;
  outcome_.error = ec;
  auto done = std::move(done_);
  done(std::move(outcome_));
}

void FileExchange::Complete() {
  outcome_.response_complete = true;
  auto done = std::move(done_);
  done(std::move(outcome_));
}

void ReadFileExchange::Start() {
  OnIoThread([this, self = shared_from_this()] { return store_.OpenForRead(path_); },
             [this, self = shared_from_this()](OrProblem<OpenedFile> opened) {
               OnOpened(std::move(opened));
             });
}

void ReadFileExchange::OnOpened(OrProblem<OpenedFile> opened) {
  if (auto* problem = std::get_if<Problem>(&opened)) {
    FinishWithProblem(std::move(*problem));
    return;
  }
  file_ = std::move(std::get<OpenedFile>(opened));
  const FileVersion& version = file_.version;
  outcome_.etag = version.etag;

  switch (DecideRead(conditions_, version.etag)) {
    case ReadDecision::kPreconditionFailed:
      FinishWithProblem(Problem{412, "precondition-failed", "Precondition Failed",
                                "If-Match does not hold for the current file"});
      return;
    case ReadDecision::kNotModified: {
      ResponseHeader header;
      header.result(http::status::not_modified);
      SetVersionFields(version, header);
      WriteHeaderOnly(std::move(header));
      return;
    }
    case ReadDecision::kServe:
      break;
  }

  header_.result(http::status::ok);
  header_.set(http::field::content_type, "application/octet-stream");
  header_.set(http::field::content_length, std::to_string(version.size));
  SetVersionFields(version, header_);
  if (method_ == http::verb::head || version.size == 0) {
    WriteHeaderOnly(std::move(header_));
    return;
  }
  buffer_.resize(
      std::max<std::size_t>(1, std::min<std::uint64_t>(backend_->chunk_bytes, version.size)));
  ReadNextChunk();
}

void ReadFileExchange::ReadNextChunk() {
  const std::size_t wanted = std::min<std::uint64_t>(buffer_.size(), file_.version.size - offset_);
  OnIoThread(
      [this, self = shared_from_this(), wanted] {
        return FileStore::ReadAt(file_.file.get(), offset_, buffer_.data(), wanted);
      },
      [this, self = shared_from_this(), wanted](OrProblem<std::size_t> read) {
        if (auto* problem = std::get_if<Problem>(&read)) {
          if (!outcome_.response_started) {
            FinishWithProblem(std::move(*problem));
          } else {
            FinishFailed(Failure::kBackendIO, boost::asio::error::fault);
          }
          return;
        }
        const std::size_t got = std::get<std::size_t>(read);
        if (got != wanted) {
          // We never write files in place, so someone else truncated this one under us.
          FinishFailed(Failure::kBackendIO, boost::asio::error::eof);
          return;
        }
        WriteChunk(got);
      });
}

void ReadFileExchange::WriteChunk(std::size_t bytes) {
  offset_ += bytes;
  const bool last = offset_ == file_.version.size;
  auto on_written = [this, self = shared_from_this(), bytes, last](boost::system::error_code ec) {
    if (ec) {
      FinishFailed(Failure::kClient, ec);
      return;
    }
    outcome_.response_body_bytes += bytes;
    if (last) {
      Complete();
    } else {
      ReadNextChunk();
    }
  };
  const boost::asio::const_buffer chunk(buffer_.data(), bytes);
  if (!outcome_.response_started) {
    outcome_.response_started = true;
    outcome_.status = header_.result_int();
    downstream_.AsyncWriteResponse(std::move(header_), chunk, last, std::move(on_written));
  } else {
    downstream_.AsyncWriteBody(chunk, last, std::move(on_written));
  }
}

WriteFileExchange::~WriteFileExchange() {
  if (reserved_bytes_ > 0) backend_->relay_budget->Release(reserved_bytes_);
  Unlist();
  // Dropped with its temp file still there: its network thread stopped mid-upload (a drain
  // that cut it). The file is removed on an I/O thread, like every file operation; the
  // adapter's I/O threads finish their queue before they end.
  if (!write_.temp_name.empty()) {
    boost::asio::post(backend_->io,
                      [write = std::move(write_)]() mutable { FileStore::Abandon(write); });
  }
}

void WriteFileExchange::Start(LiveWrites& live) {
  tracker_ = &live;
  Start();
}

void WriteFileExchange::Unlist() {
  if (live_ != nullptr) live_->Remove(*this);
}

void WriteFileExchange::RemoveTempFileAfterItsThreadStopped() {
  // By name only: an I/O thread may still be appending to the file, so its descriptor stays.
  if (abandoning_ || write_.temp_name.empty()) return;
  unlinkat(write_.directory.get(), write_.temp_name.c_str(), 0);
  write_.temp_name.clear();
}

void WriteFileExchange::Start() {
  if (backend_->relay_budget != nullptr && !downstream_.body_done()) {
    const std::size_t slots_bytes = slots_.size() * SlotBytes(*backend_);
    if (!backend_->relay_budget->TryReserve(slots_bytes)) {
      // Refused before the file store is touched; posted, as done never runs inside Forward().
      boost::asio::post(ioc_, [this, self = shared_from_this()] {
        FinishRefused(RelayMemoryExhaustedProblem());
      });
      return;
    }
    reserved_bytes_ = slots_bytes;
  }
  OnIoThread(
      [this, self = shared_from_this()] {
        return store_.BeginWrite(path_, WriteRequirements{conditions_, token_});
      },
      [this, self = shared_from_this()](OrProblem<PendingWrite> begun) {
        OnBegun(std::move(begun));
      });
}

void WriteFileExchange::OnBegun(OrProblem<PendingWrite> begun) {
  if (auto* problem = std::get_if<Problem>(&begun)) {
    // The body stays unread: the gateway decides whether the connection can go on.
    FinishWithProblem(std::move(*problem));
    return;
  }
  write_ = std::move(std::get<PendingWrite>(begun));
  if (tracker_ != nullptr) tracker_->Add(*this);
  if (downstream_.body_done()) {
    Commit();
    return;
  }
  ReadBodyInto(0);
}

void WriteFileExchange::ReadBodyInto(int slot) {
  read_in_flight_ = true;
  if (!slots_[slot].data) {
    const bool ready = downstream_.WaitForBodyNowOrLater(
        [this, self = shared_from_this(), slot](boost::system::error_code ec) {
          if (!ec) {
            ReadBodyIntoAllocated(slot);
            return;
          }
          read_in_flight_ = false;
          RecordFailure(Failure::kClient, ec, std::nullopt);
          AbortWhenIdle();
        });
    if (!ready) return;
  }
  ReadBodyIntoAllocated(slot);
}

void WriteFileExchange::ReadBodyIntoAllocated(int slot) {
  const std::size_t slot_bytes = SlotBytes(*backend_);
  if (!slots_[slot].data) slots_[slot].data = std::make_unique_for_overwrite<char[]>(slot_bytes);
  downstream_.AsyncReadBody(boost::asio::buffer(slots_[slot].data.get(), slot_bytes),
                            [this, self = shared_from_this(), slot](boost::system::error_code ec,
                                                                    std::size_t bytes, bool done) {
                              read_in_flight_ = false;
                              if (ec) {
                                RecordFailure(Failure::kClient, ec, std::nullopt);
                              }
                              if (aborting_) {
                                AbortWhenIdle();
                                return;
                              }
                              outcome_.request_body_bytes += bytes;
                              slots_[slot].size = bytes;
                              slots_[slot].last = done;
                              if (write_in_flight_) {
                                filled_slot_ = slot;
                              } else {
                                WriteSlot(slot);
                              }
                            });
}

void WriteFileExchange::WriteSlot(int slot) {
  write_in_flight_ = true;
  if (!slots_[slot].last) {
    // The other slot is free: its bytes are on disk. Fill it while this one is written.
    ReadBodyInto(1 - slot);
  }
  OnIoThread(
      [this, self = shared_from_this(), slot] {
        return FileStore::Append(write_, slots_[slot].data.get(), slots_[slot].size);
      },
      [this, self = shared_from_this(), slot](std::error_code ec) {
        write_in_flight_ = false;
        if (ec) {
          RecordFailure(Failure::kBackendIO, ToBoost(ec),
                        ProblemFromError(ec, "write " + path_.RelativePath()));
        }
        if (aborting_) {
          AbortWhenIdle();
          return;
        }
        if (slots_[slot].last) {
          Commit();
        } else if (filled_slot_) {
          const int next = *filled_slot_;
          filled_slot_.reset();
          WriteSlot(next);
        }
      });
}

void WriteFileExchange::Commit() {
  Unlist();
  OnIoThread(
      [this, self = shared_from_this()] {
        return store_.Commit(path_, std::move(write_), WriteRequirements{conditions_, token_});
      },
      [this, self = shared_from_this()](OrProblem<CommittedWrite> committed) {
        if (auto* problem = std::get_if<Problem>(&committed)) {
          // The body was read in full, so a refusal here still leaves a usable connection.
          FinishWithProblem(std::move(*problem));
          return;
        }
        const CommittedWrite& result = std::get<CommittedWrite>(committed);
        outcome_.etag = result.version.etag;
        ResponseHeader header;
        if (result.created) {
          header.result(http::status::created);
          header.set(http::field::content_length, "0");
        } else {
          header.result(http::status::no_content);
        }
        SetVersionFields(result.version, header);
        WriteHeaderOnly(std::move(header));
      });
}

void WriteFileExchange::RecordFailure(Failure failure, boost::system::error_code ec,
                                      std::optional<Problem> problem) {
  if (aborting_) {
    return;
  }
  aborting_ = true;
  failure_ = failure;
  failure_error_ = ec;
  failure_problem_ = std::move(problem);
}

void WriteFileExchange::AbortWhenIdle() {
  if (read_in_flight_ || write_in_flight_ || abandoning_) {
    return;
  }
  abandoning_ = true;
  Unlist();
  OnIoThread(
      [this, self = shared_from_this()] {
        FileStore::Abandon(write_);
        return true;
      },
      [this, self = shared_from_this()](bool) {
        if (failure_problem_) {
          outcome_.error = failure_error_;
          FinishWithProblem(std::move(*failure_problem_));
        } else {
          FinishFailed(failure_, failure_error_);
        }
      });
}

void DeleteFileExchange::Start() {
  OnIoThread(
      [this, self = shared_from_this()] {
        return store_.Remove(path_, WriteRequirements{conditions_, token_});
      },
      [this, self = shared_from_this()](std::optional<Problem> problem) {
        if (problem) {
          FinishWithProblem(std::move(*problem));
          return;
        }
        ResponseHeader header;
        header.result(http::status::no_content);
        WriteHeaderOnly(std::move(header));
      });
}

}  // namespace fencegate::adapters
