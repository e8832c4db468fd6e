#pragma once

#include "../engine/FastRandom.h"
#include "../engine/RequestRenderer.h"

#include <cstdint>
#include <string>

namespace taxicore::bench {

// Renders the calls of TaxiCore's API v1 with random but valid inputs: coordinates in central
// Gothenburg (inside the city's bounds lat 57.65-57.76, lng 11.86-12.09, kept to the inner city
// so routes exist), car ids in the default fleet.
class TaxiRequests {
public:
    // The inner city around Brunnsparken (57.706, 11.969): every point is on or near roads.
    static constexpr double kMinLat = 57.690;
    static constexpr double kMaxLat = 57.715;
    static constexpr double kMinLng = 11.940;
    static constexpr double kMaxLng = 11.990;
    static constexpr int kFleetSize = 500; // car ids 1..500, the server's default fleet
    static constexpr int kNearbyRadiusMeters = 1000;
    static constexpr int kNearbyLimit = 20;

    // `deviceToken`: sent with each position report (the server wants the car's device token,
    // or the admin token, unless the bench is a trusted loopback client); empty: none sent.
    explicit TaxiRequests(const RequestRenderer &renderer, std::string deviceToken = {})
        : m_renderer(renderer)
        , m_deviceAuthorization(deviceToken.empty() ? std::string() : "Authorization: Bearer " + deviceToken + "\r\n")
    {
    }

    std::string positionUpdate(FastRandom &random) const;
    std::string nearby(FastRandom &random) const;
    std::string quote(FastRandom &random) const;
    std::string book(FastRandom &random, std::string_view riderId) const;
    // As the rider holding `riderToken` (the booking answer's rider_token: the server shows a
    // booking only to its owner, and lets only its owner move it).
    std::string getBooking(int64_t bookingId, std::string_view riderToken) const;
    // transition: "pickup", "complete" or "cancel", as the rider holding `riderToken`.
    std::string transition(int64_t bookingId, std::string_view transition, std::string_view riderToken) const;

private:
    static std::string riderAuthorization(std::string_view riderToken);

    const RequestRenderer &m_renderer;
    std::string m_deviceAuthorization; // a whole header line, or empty
};

} // namespace taxicore::bench
