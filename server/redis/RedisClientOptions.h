#pragma once

// The limits of one Redis connection (RedisClient, RedisSubscriber), each default here and only here.

#include <cstdint>

namespace taxicore::redis {

struct RedisClientOptions {
    // A TCP connect plus AUTH/SELECT that takes longer is abandoned and retried after the backoff.
    int connectTimeoutMs = 500;
    // A command waits this long for a connection, and a sent command this long for its reply;
    // then it gets an Error reply (a sent one also drops the connection: the server is stuck).
    int commandTimeoutMs = 1000;
    // Commands accepted but not yet answered (waiting, in flight); beyond it they fail at once.
    int maxQueued = 100000;
    // Reconnect delays: the first retry after reconnectMinMs, doubling up to reconnectMaxMs.
    int reconnectMinMs = 100;
    int reconnectMaxMs = 2000;
    // RedisSubscriber: a liveness probe on the subscribed connection this often (a PING in spirit;
    // RedisSubscriber.cpp says why it is a PSUBSCRIBE); nothing received within pingDeadlineMs
    // means a dead server or path, and the subscriber reconnects.
    int pingIntervalMs = 1000;
    int pingDeadlineMs = 1000;
};

struct RedisClientStats {
    std::uint64_t sent = 0;       // commands written to Redis
    std::uint64_t failed = 0;     // commands answered by the client with an Error (unavailable, timeout, closed)
    std::uint64_t dropped = 0;    // commands refused at once because maxQueued were outstanding
    std::uint64_t reconnects = 0; // connections made after the first one
};

} // namespace taxicore::redis
