#pragma once

#include "FastRandom.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace taxicore::bench {

// What a response means to the run. A scenario may expect some non-2xx answers (a taxi booking
// refused with 409 because no car is free): those are counted apart and are not errors.
enum class ResponseClass {
    Success,
    NoCarAvailable, // 409 on a booking request
    Conflict,       // 409 on a booking transition the flow tried tolerantly
    HttpError,      // any other non-2xx: an error, counted by status
};

ResponseClass classifyStatus(int status);

// The requests of one connection. It may keep state between requests (the taxi flow books, then
// reads the booking id from the response to pick up or cancel that booking).
class RequestSource {
public:
    virtual ~RequestSource() = default;
    // The next request's bytes; valid until the next call on this source.
    virtual std::string_view nextRequest(FastRandom &random) = 0;
    // Whether onResponse needs the response body (otherwise the engine drops it unread).
    virtual bool wantsBody() const { return false; }
    virtual ResponseClass onResponse(int status, std::string_view body);
    // The last request got no response (timeout, reset...): start the flow afresh.
    virtual void onFailure() {}
    // Which of the plan's kindNames() the last request was (for the per-request breakdown).
    virtual int kindOfLastRequest() const { return 0; }
};

// The shared, immutable description of a request mix; makes one source per connection.
class RequestPlan {
public:
    virtual ~RequestPlan() = default;
    virtual std::unique_ptr<RequestSource> makeSource(uint32_t connectionIndex) const = 0;
    // One line for the summary, e.g. "GET /hello" or "taxi mix".
    virtual std::string describe() const = 0;
    // Names of the kinds of request the plan mixes, e.g. "GET nearby"; empty for a single kind
    // (then no per-request breakdown is kept).
    virtual std::vector<std::string> kindNames() const { return {}; }
};

} // namespace taxicore::bench
