#include "MapProjection.h"

#include <cmath>
#include <numbers>

namespace {
constexpr double kEarthRadiusM = 6371008.8; // mean radius, as the server's geo maths
}

MapProjection::MapProjection(double originLat, double originLng)
    : m_originLat(originLat)
    , m_originLng(originLng)
    , m_metresPerDegreeLat(kEarthRadiusM * std::numbers::pi / 180.0)
    , m_metresPerDegreeLng(m_metresPerDegreeLat * std::cos(originLat * std::numbers::pi / 180.0))
{
}

QPointF MapProjection::toLatLng(QPointF metres) const
{
    return {m_originLng + metres.x() / m_metresPerDegreeLng, m_originLat - metres.y() / m_metresPerDegreeLat};
}
