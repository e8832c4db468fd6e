#pragma once

#include "../engine/RequestPlan.h"
#include "TaxiRequests.h"

#include <cstdint>
#include <string>

namespace taxicore::bench {

// Relative weights of the independent calls of the taxi mix. "book" starts a booking flow:
// book -> GET booking -> pickup -> complete when the car is arriving, else book -> GET -> cancel.
struct TaxiMixWeights {
    double positionUpdate = 50;
    double nearby = 25;
    double quote = 10;
    double book = 15;
};

// One connection of the taxi mix: a small state machine that carries the booking id of the
// previous response into the next request. Tolerant: an unexpected answer ends the flow and
// the connection goes back to independent calls.
class TaxiMixSource : public RequestSource {
public:
    TaxiMixSource(const TaxiRequests &requests, std::string riderId, TaxiMixWeights weights);

    std::string_view nextRequest(FastRandom &random) override;
    bool wantsBody() const override { return true; }
    ResponseClass onResponse(int status, std::string_view body) override;
    void onFailure() override;
    // The Step order is the order of TaxiPlan::kindNames().
    int kindOfLastRequest() const override { return static_cast<int>(m_sent); }

    enum class Step { PositionUpdate, Nearby, Quote, Book, CheckBooking, Pickup, Complete, Cancel, None };
    Step lastStep() const { return m_sent; }
    int64_t bookingId() const { return m_bookingId; }

private:
    Step pickIndependentStep(FastRandom &random) const;
    ResponseClass afterBook(int status, std::string_view body);
    ResponseClass afterCheck(int status, std::string_view body);
    ResponseClass afterTransition(int status, Step onSuccess);

    const TaxiRequests &m_requests;
    std::string m_riderId;
    TaxiMixWeights m_weights;
    std::string m_request;
    Step m_sent = Step::None;
    Step m_next = Step::None; // forced next step while a booking flow runs
    int64_t m_bookingId = -1;
    std::string m_riderToken; // of m_bookingId: reading it, pickup, complete and cancel need it
};

} // namespace taxicore::bench
