#include "base/net/gathered_write.h"

#include <sys/socket.h>
#include <sys/uio.h>

namespace fencegate::adapters {

bool SendAtOnce(int fd, WriteGather& gather) {
  iovec pieces[std::tuple_size_v<WriteGather>];
  int count = 0;
  for (const boost::asio::const_buffer& buffer : gather) {
    if (buffer.size() == 0) continue;
    pieces[count++] = {const_cast<void*>(buffer.data()), buffer.size()};
  }
  if (count == 0) return true;
  // MSG_NOSIGNAL: a peer that went away is an error to report, not SIGPIPE.
  ssize_t sent;
  if (count == 1) {
    sent = ::send(fd, pieces[0].iov_base, pieces[0].iov_len, MSG_DONTWAIT | MSG_NOSIGNAL);
  } else {
    msghdr message{};
    message.msg_iov = pieces;
    message.msg_iovlen = static_cast<std::size_t>(count);
    sent = ::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  if (sent <= 0) return false;
  ConsumeGather(gather, static_cast<std::size_t>(sent));
  return boost::asio::buffer_size(gather) == 0;
}

}  // namespace fencegate::adapters
