#pragma once
// Plain geographic value types and the few formulas the hot paths need.

#include <cstdint>

namespace taxicore::city {

struct GeoPoint {
    double lat = 0;
    double lng = 0;
};

struct GeoBounds {
    GeoPoint min; // south-west corner
    GeoPoint max; // north-east corner
    bool contains(GeoPoint p) const
    {
        return p.lat >= min.lat && p.lat <= max.lat && p.lng >= min.lng && p.lng <= max.lng;
    }
};

inline constexpr double kEarthRadiusMeters = 6371008.8;
inline constexpr double kMetersPerDegreeLat = 111194.93; // kEarthRadiusMeters * pi / 180
// Coordinates are stored as integers of 1e-7 degree, OpenStreetMap's own precision.
inline constexpr double kCoordUnitsPerDegree = 1e7;

// Great-circle distance in metres.
double haversineMeters(GeoPoint a, GeoPoint b);
// Initial bearing from a to b, degrees clockwise from north in [0, 360).
double bearingDeg(GeoPoint a, GeoPoint b);
// The point `metres` from `from` towards `to` (clamped at `to`).
GeoPoint moveTowards(GeoPoint from, GeoPoint to, double metres);
bool isValidCoordinate(double lat, double lng);

// A local flat projection (equirectangular around a reference latitude): metres east/north.
// Within a city (tens of km) its error is far below the accuracy of the data.
struct LocalProjection {
    GeoPoint origin;
    double metersPerDegreeLng = kMetersPerDegreeLat;

    explicit LocalProjection(GeoPoint originPoint);
    double x(double lng) const { return (lng - origin.lng) * metersPerDegreeLng; }
    double y(double lat) const { return (lat - origin.lat) * kMetersPerDegreeLat; }
};

inline int32_t toCoordUnits(double degrees)
{
    return static_cast<int32_t>(degrees * kCoordUnitsPerDegree + (degrees >= 0 ? 0.5 : -0.5));
}
inline double fromCoordUnits(int32_t units)
{
    return units / kCoordUnitsPerDegree;
}

} // namespace taxicore::city

namespace taxicore {
// The fleet, pricing and the API call a position a LatLng; it is the city's point.
using LatLng = city::GeoPoint;
} // namespace taxicore
