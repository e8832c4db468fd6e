#include "TaxiRequests.h"

#include <cstdio>

namespace taxicore::bench {

namespace {

constexpr double kMaxSpeedKmh = 50;
constexpr int kCoordinateBufferBytes = 96;

std::string coordinate(double value)
{
    char text[kCoordinateBufferBytes];
    std::snprintf(text, sizeof text, "%.6f", value);
    return text;
}

struct Point {
    std::string lat;
    std::string lng;
};

Point randomPoint(FastRandom &random)
{
    return {coordinate(random.between(TaxiRequests::kMinLat, TaxiRequests::kMaxLat)),
            coordinate(random.between(TaxiRequests::kMinLng, TaxiRequests::kMaxLng))};
}

} // namespace

std::string TaxiRequests::positionUpdate(FastRandom &random) const
{
    const int64_t carId = random.integer(1, kFleetSize);
    const Point at = randomPoint(random);
    const std::string body = "{\"lat\":" + at.lat + ",\"lng\":" + at.lng
                             + ",\"heading\":" + std::to_string(random.integer(0, 359))
                             + ",\"speed_kmh\":" + coordinate(random.between(0, kMaxSpeedKmh)) + "}";
    return m_renderer.render("PUT", "/api/v1/cars/" + std::to_string(carId) + "/position", body, m_deviceAuthorization);
}

std::string TaxiRequests::nearby(FastRandom &random) const
{
    const Point at = randomPoint(random);
    return m_renderer.render("GET", "/api/v1/cars/nearby?lat=" + at.lat + "&lng=" + at.lng
                                        + "&radius_m=" + std::to_string(kNearbyRadiusMeters)
                                        + "&limit=" + std::to_string(kNearbyLimit));
}

std::string TaxiRequests::quote(FastRandom &random) const
{
    const Point from = randomPoint(random);
    const Point to = randomPoint(random);
    return m_renderer.render("GET", "/api/v1/quote?from_lat=" + from.lat + "&from_lng=" + from.lng + "&to_lat=" + to.lat
                                        + "&to_lng=" + to.lng);
}

std::string TaxiRequests::book(FastRandom &random, std::string_view riderId) const
{
    const Point pickup = randomPoint(random);
    const Point dropoff = randomPoint(random);
    const std::string body = "{\"rider_id\":\"" + std::string(riderId) + "\",\"pickup\":{\"lat\":" + pickup.lat
                             + ",\"lng\":" + pickup.lng + "},\"dropoff\":{\"lat\":" + dropoff.lat
                             + ",\"lng\":" + dropoff.lng + "}}";
    return m_renderer.render("POST", "/api/v1/bookings", body);
}

std::string TaxiRequests::getBooking(int64_t bookingId, std::string_view riderToken) const
{
    return m_renderer.render("GET", "/api/v1/bookings/" + std::to_string(bookingId), {},
                             riderAuthorization(riderToken));
}

std::string TaxiRequests::transition(int64_t bookingId, std::string_view transition, std::string_view riderToken) const
{
    return m_renderer.render("POST", "/api/v1/bookings/" + std::to_string(bookingId) + "/" + std::string(transition),
                             {}, riderAuthorization(riderToken));
}

std::string TaxiRequests::riderAuthorization(std::string_view riderToken)
{
    return "Authorization: Bearer " + std::string(riderToken) + "\r\n";
}

} // namespace taxicore::bench
