#include "TaxiMixSource.h"

#include "JsonPeek.h"

namespace taxicore::bench {

namespace {

constexpr int kHttpConflict = 409;

bool isSuccess(int status)
{
    return status >= 200 && status < 300;
}

} // namespace

TaxiMixSource::TaxiMixSource(const TaxiRequests &requests, std::string riderId, TaxiMixWeights weights)
    : m_requests(requests)
    , m_riderId(std::move(riderId))
    , m_weights(weights)
{
}

TaxiMixSource::Step TaxiMixSource::pickIndependentStep(FastRandom &random) const
{
    const double total = m_weights.positionUpdate + m_weights.nearby + m_weights.quote + m_weights.book;
    double pick = random.uniform() * total;
    if ((pick -= m_weights.positionUpdate) < 0)
        return Step::PositionUpdate;
    if ((pick -= m_weights.nearby) < 0)
        return Step::Nearby;
    if ((pick -= m_weights.quote) < 0)
        return Step::Quote;
    return Step::Book;
}

std::string_view TaxiMixSource::nextRequest(FastRandom &random)
{
    m_sent = m_next != Step::None ? m_next : pickIndependentStep(random);
    m_next = Step::None;
    switch (m_sent) {
    case Step::PositionUpdate:
        m_request = m_requests.positionUpdate(random);
        break;
    case Step::Nearby:
        m_request = m_requests.nearby(random);
        break;
    case Step::Quote:
        m_request = m_requests.quote(random);
        break;
    case Step::Book:
        m_request = m_requests.book(random, m_riderId);
        break;
    case Step::CheckBooking:
        m_request = m_requests.getBooking(m_bookingId, m_riderToken);
        break;
    case Step::Pickup:
        m_request = m_requests.transition(m_bookingId, "pickup", m_riderToken);
        break;
    case Step::Complete:
        m_request = m_requests.transition(m_bookingId, "complete", m_riderToken);
        break;
    case Step::Cancel:
        m_request = m_requests.transition(m_bookingId, "cancel", m_riderToken);
        break;
    case Step::None:
        break;
    }
    return m_request;
}

ResponseClass TaxiMixSource::onResponse(int status, std::string_view body)
{
    switch (m_sent) {
    case Step::Book:
        return afterBook(status, body);
    case Step::CheckBooking:
        return afterCheck(status, body);
    case Step::Pickup:
        return afterTransition(status, Step::Complete);
    case Step::Complete:
    case Step::Cancel:
        return afterTransition(status, Step::None);
    default:
        return classifyStatus(status);
    }
}

ResponseClass TaxiMixSource::afterBook(int status, std::string_view body)
{
    if (status == kHttpConflict)
        return ResponseClass::NoCarAvailable;
    if (!isSuccess(status))
        return ResponseClass::HttpError;
    if (const auto id = peekJsonInteger(body, "booking_id")) {
        m_bookingId = *id;
        m_riderToken = std::string(peekJsonString(body, "rider_token").value_or(std::string_view{}));
        m_next = Step::CheckBooking;
    }
    return ResponseClass::Success;
}

ResponseClass TaxiMixSource::afterCheck(int status, std::string_view body)
{
    if (!isSuccess(status))
        return ResponseClass::HttpError;
    const auto state = peekJsonString(body, "state");
    if (state == "arriving")
        m_next = Step::Pickup;
    else if (state == "on_trip")
        m_next = Step::Complete;
    else if (state == "requested" || state == "assigned")
        m_next = Step::Cancel;
    // completed, cancelled or unknown: the flow is over.
    return ResponseClass::Success;
}

ResponseClass TaxiMixSource::afterTransition(int status, Step onSuccess)
{
    if (isSuccess(status)) {
        m_next = onSuccess;
        return ResponseClass::Success;
    }
    if (status == kHttpConflict) {
        // The booking moved on meanwhile (e.g. the car had not arrived): release it if we can.
        m_next = m_sent == Step::Pickup ? Step::Cancel : Step::None;
        return ResponseClass::Conflict;
    }
    return ResponseClass::HttpError;
}

void TaxiMixSource::onFailure()
{
    m_next = Step::None;
    m_bookingId = -1;
}

} // namespace taxicore::bench
