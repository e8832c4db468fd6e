#pragma once

#include <QByteArray>
#include <map>

namespace taxicore {

// A serialised response and whether the connection closes after it.
struct Answer {
    QByteArray bytes;
    bool close = false;
};

// What the guard knows about one client connection. Lives on the I/O thread only.
struct ConnectionState {
    // The current request head, as the guard peeks it before QHttpServer parses it.
    bool atRequestStart = true;
    bool headComplete = false;
    bool http10 = false;
    bool wantsClose = false;
    int headBytes = 0;
    int headerFields = 0;
    long long contentLength = 0;
    bool sawContentLength = false;
    bool chunked = false;
    long long bodyBytes = 0;     // body bytes received so far (chunked bodies have no length)
    long long leftoverBytes = 0; // buffered bytes QHttpServer left unread after its last pass
    bool expectContinue = false;
    long long headStartedMs = 0;
    long long lastActivityMs = 0;
    bool rejected = false;

    // Requests dispatched and not yet answered; responses are written in dispatch order
    // even when pool threads finish out of order (pipelining, docs/QT64.md §3).
    unsigned long long nextSequence = 0;
    unsigned long long nextToWrite = 0;
    std::map<unsigned long long, Answer> finished;
    bool closing = false; // a response said Connection: close: nothing more is written

    int inFlight() const { return int(nextSequence - nextToWrite); }
};

} // namespace taxicore
