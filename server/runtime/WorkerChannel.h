#pragma once

#include "region/WorkerProtocol.h"

#include <cstdint>
#include <optional>

namespace taxicore {

// The primary–worker channel: a Unix SEQPACKET socket carrying small messages and, with
// SCM_RIGHTS, file descriptors (accepted connections, listening sockets). The message types and
// their bytes are the worker protocol's (region/WorkerProtocol.h).
class WorkerChannel {
public:
    using Type = WorkerMessageType;
    struct Message {
        Type type;
        int fd = -1;     // when the message carries one
        uint32_t id = 0; // which passed connection a Connection/Adopted/Declined is about
    };

    // A connected pair: [0] for the primary, [1] for the worker (both close-on-exec).
    static bool createPair(int fds[2]);

    explicit WorkerChannel(int fd)
        : m_fd(fd)
    {
    }
    int fd() const { return m_fd; }
    bool send(Type type, int fd = -1, uint32_t id = 0) const;
    // Next message, or nullopt when none is waiting (non-blocking) or the peer is gone.
    std::optional<Message> receive() const;

private:
    int m_fd;
};

} // namespace taxicore
