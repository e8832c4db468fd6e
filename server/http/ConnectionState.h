#pragma once

#include "wire/RequestFraming.h"

#include <QByteArray>
#include <QMetaObject>
#include <map>

namespace taxicore {

// A serialised response and whether it says Connection: close (the client asked, or a refusal).
// One that says keep-alive may still be the last: the guard then makes it say close (a drain).
struct Answer {
    QByteArray bytes;
    bool close = false;
};

// What the guard knows about one client connection. Lives on the I/O thread only.
struct ConnectionState {
    explicit ConnectionState(const ConnectionLimits &limits)
        : framing(limits)
    {
    }

    // Every byte of the connection passes the framing check before QHttpServer parses it.
    RequestFraming framing;
    // Bytes at the front of the socket's buffer the check has seen and Qt not yet parsed.
    long long checkedBytes = 0;
    // The buffer's size when the guard last looked, so it can tell what Qt consumed since.
    long long bufferedBytes = 0;
    // Bytes taken off the front of the socket's buffer so far, by Qt's parser or the guard's
    // direct path: the stream offset of the buffer's first byte.
    long long consumedBytes = 0;
    long long lastActivityMs = 0;
    bool rejected = false;
    // Nothing more of the connection is read or run: a request whose answer closes it was taken
    // (Connection: close, HTTP/1.0, any request while draining), or it was refused. It closes
    // after the answer to the last request taken (RFC 9112 §9.6).
    bool stoppedReading = false;
    // Reading stopped: too much unsent output or too many unanswered requests (backpressure).
    bool paused = false;
    QMetaObject::Connection drainWatch; // bytesWritten → resume, while paused
    // A pass spent its budget (PassBudget) with whole requests left: they are parked
    // (GuardedSocket::parkInput) and the next pass is queued behind what the event loop has to do.
    // The connection is busy meanwhile: neither a sweep nor a drain closes it as idle.
    bool passQueued = false;

    // Requests dispatched and not yet answered; responses are written in dispatch order
    // even when pool threads finish out of order (pipelining, docs/QT64.md §3).
    unsigned long long nextSequence = 0;
    unsigned long long nextToWrite = 0;
    std::map<unsigned long long, Answer> finished;
    bool closing = false; // a response said Connection: close: nothing more is written
    // Input dropped since reading stopped (ConnectionGuard::discardInput): the client sent what
    // will never be read, so closing must not reset the connection (ConnectionGuard::linger).
    long long discardedBytes = 0;
    // Half-closed after its last answer: what the client still sends is dropped until it closes,
    // or the linger's time or bytes run out (ConnectionGuard::kLingerMs, kLingerBytes).
    bool lingering = false;
    long long lingerDiscardStart = 0; // discardedBytes when the linger began
    // The sweep's watch on the answer owed longest: nextToWrite when it last looked, and since
    // when it has stood there with a request in flight (0: nothing owed). Kept by the sweep
    // alone, so serving a request reads no clock for it.
    unsigned long long watchedToWrite = 0;
    long long owedSinceMs = 0;

    int inFlight() const { return int(nextSequence - nextToWrite); }
};

} // namespace taxicore
