#pragma once

namespace taxicore {

// Every limit and timeout of the connection guard, with its default (docs/reference/limits.md).
struct ConnectionLimits {
    int maxRequestLineBytes = 8 * 1024;     // longer → 414
    int maxHeaderBytes = 32 * 1024;         // more → 431
    int maxHeaderFields = 100;              // more → 431
    long long maxBodyBytes = 64 * 1024;     // larger Content-Length → 413
    int headerTimeoutMs = 10'000;           // a request head must arrive within this
    int idleTimeoutMs = 15'000;             // a keep-alive connection with nothing to do is closed
    int maxConnections = 20'000;            // over it → 503 and close
    int maxConnectionsPerClient = 64;       // one peer address over it, on the machine → 429 and close; 0: none
    int drainGraceMs = 2'000;               // idle connections left open this long when draining
    int maxPendingOutputBytes = 256 * 1024; // unsent answers above it → stop reading the connection
    int maxPipelined = 32;                  // unanswered requests at it → stop reading the connection
    int answerTimeoutMs = 30'000;           // an answer owed this long, no other answered → 503 and close
};

} // namespace taxicore
