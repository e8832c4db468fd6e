#include "SiegeTaxiSource.h"

#include "JsonPeek.h"
#include "TaxiMixSource.h"

namespace taxicore::bench {

namespace {

enum Call { PositionUpdate = 0, Nearby = 1, Book = 2, GetBooking = 3 };
constexpr int kHttpConflict = 409;

} // namespace

SiegeTaxiSource::SiegeTaxiSource(const TaxiRequests &requests, std::string riderId)
    : m_requests(requests)
    , m_riderId(std::move(riderId))
{
}

std::string_view SiegeTaxiSource::nextRequest(FastRandom &random)
{
    using Step = TaxiMixSource::Step;
    m_sentCall = m_call;
    m_call = (m_call + 1) % kCallsInCycle;
    Step kind = Step::Nearby;
    switch (m_sentCall) {
    case PositionUpdate:
        m_request = m_requests.positionUpdate(random);
        kind = Step::PositionUpdate;
        break;
    case Book:
        m_bookingId = -1;
        m_request = m_requests.book(random, m_riderId);
        kind = Step::Book;
        break;
    case GetBooking:
        if (m_bookingId >= 0) {
            m_request = m_requests.getBooking(m_bookingId, m_riderToken);
            kind = Step::CheckBooking;
            break;
        }
        [[fallthrough]];
    default:
        m_request = m_requests.nearby(random);
        break;
    }
    m_sentKind = static_cast<int>(kind);
    return m_request;
}

ResponseClass SiegeTaxiSource::onResponse(int status, std::string_view body)
{
    if (m_sentCall == Book) {
        if (status == kHttpConflict)
            return ResponseClass::NoCarAvailable;
        if (const auto id = peekJsonInteger(body, "booking_id")) {
            m_bookingId = *id;
            m_riderToken = std::string(peekJsonString(body, "rider_token").value_or(std::string_view{}));
        }
    }
    return classifyStatus(status);
}

} // namespace taxicore::bench
