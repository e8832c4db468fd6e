#pragma once

#include "../engine/RequestPlan.h"
#include "TaxiRequests.h"

#include <string>

namespace taxicore::bench {

// The siege experiment's client: cycles through the four taxi calls in order, PUT position,
// GET nearby, POST booking, GET booking (of the booking just made; GET nearby again when the
// booking was refused). Bookings are left standing, as in the seed write-up.
class SiegeTaxiSource : public RequestSource {
public:
    SiegeTaxiSource(const TaxiRequests &requests, std::string riderId);

    std::string_view nextRequest(FastRandom &random) override;
    bool wantsBody() const override { return true; }
    ResponseClass onResponse(int status, std::string_view body) override;
    void onFailure() override { m_bookingId = -1; }
    int kindOfLastRequest() const override { return m_sentKind; }

private:
    static constexpr int kCallsInCycle = 4;

    const TaxiRequests &m_requests;
    std::string m_riderId;
    std::string m_request;
    int m_call = 0; // index of the next call in the cycle
    int m_sentCall = 0;
    int m_sentKind = 0; // index in TaxiPlan::kindNames()
    int64_t m_bookingId = -1;
    std::string m_riderToken; // of m_bookingId: the server shows a booking only to its rider
};

} // namespace taxicore::bench
