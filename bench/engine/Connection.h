#pragma once

#include "HttpResponseParser.h"
#include "RequestPlan.h"

#include <cstdint>
#include <memory>
#include <string_view>

namespace taxicore::bench {

// One simulated client: a socket (or none between connections), the request in flight and
// its time stamps. Owned and touched by one worker thread only.
struct Connection {
    enum class Phase {
        Idle,       // no request in flight: waiting for its next send time, or finished
        Connecting, // non-blocking connect() in progress
        Writing,    // request partly written
        Reading,    // request written, response not complete
    };

    uint32_t globalIndex = 0; // 0..C-1 across all threads: rider id, open-loop phase
    int fd = -1;
    uint32_t epollEvents = 0; // events currently registered, 0 when not registered
    Phase phase = Phase::Idle;
    bool finished = false; // request-count mode: no more tickets for this connection
    bool retriedStale = false;
    uint32_t requestsOnSocket = 0;

    std::unique_ptr<RequestSource> source;
    std::string_view request; // bytes of the request in flight (owned by `source`)
    std::size_t written = 0;
    HttpResponseParser parser;

    int64_t intendedNs = 0;     // when the schedule wanted this request sent
    int64_t sentNs = 0;         // when the client actually started it (connect or write)
    int64_t deadlineNs = 0;     // sentNs + timeout
    int64_t nextIntendedNs = 0; // open loop: the schedule of the next request
    bool counted = false;       // this request falls inside the measured window
};

} // namespace taxicore::bench
