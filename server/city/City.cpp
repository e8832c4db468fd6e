#include "city/City.h"

#include "city/CityLoader.h"
#include "city/EtaSearch.h"
#include "city/MapEncoding.h"
#include "city/Router.h"
#include "city/Snapper.h"

#include <QFile>
#include <algorithm>

namespace taxicore::city {

City::City() = default;
City::~City() = default;

CityLoadResult City::load(const QString &path)
{
    std::shared_ptr<City> city(new City());
    city->m_file = std::make_unique<QFile>(path);
    if (QString error = mapCityFile(*city->m_file, city->m_data); !error.isEmpty())
        return {nullptr, error};
    city->m_snapper = std::make_unique<Snapper>(city->m_data);
    city->m_router = std::make_unique<Router>(city->m_data);
    city->m_etaSearch = std::make_unique<EtaSearch>(city->m_data);
    city->m_cumulativeLength.reserve(city->m_data.segments.size() + 1);
    double total = 0;
    city->m_cumulativeLength.push_back(0);
    for (const format::Segment &segment : city->m_data.segments)
        city->m_cumulativeLength.push_back(total += segment.lengthM);
    return {std::move(city), {}};
}

GeoBounds City::bounds() const
{
    return {CityData::geo(m_data.header->boundsMin), CityData::geo(m_data.header->boundsMax)};
}

GeoPoint City::centre() const
{
    const GeoBounds b = bounds();
    return {(b.min.lat + b.max.lat) / 2, (b.min.lng + b.max.lng) / 2};
}

RoadPoint City::snap(GeoPoint point) const
{
    return m_snapper->snap(point);
}

Route City::route(const RoadPoint &from, const RoadPoint &to) const
{
    return m_router->route(from, to);
}

Route City::route(GeoPoint from, GeoPoint to) const
{
    return route(snap(from), snap(to));
}

std::vector<double> City::etaTo(const RoadPoint &target, std::span<const RoadPoint> sources, double maxSeconds) const
{
    return m_etaSearch->etaTo(target, sources, maxSeconds);
}

RoadPoint City::randomRoadPoint(std::mt19937_64 &rng) const
{
    if (m_data.segments.empty() || !(m_cumulativeLength.back() > 0))
        return m_data.segments.empty() ? RoadPoint{} : m_snapper->pointAlong(0, 0);
    std::uniform_real_distribution<double> along(0, m_cumulativeLength.back());
    const double position = along(rng);
    const auto it = std::upper_bound(m_cumulativeLength.begin(), m_cumulativeLength.end(), position);
    const uint32_t segment =
        uint32_t(std::clamp<ptrdiff_t>(it - m_cumulativeLength.begin() - 1, 0, ptrdiff_t(m_data.segments.size()) - 1));
    return m_snapper->pointAlong(segment, position - m_cumulativeLength[segment]);
}

std::string_view City::streetName(const RoadPoint &point) const
{
    if (!point.valid || point.segment >= m_data.segments.size())
        return {};
    return m_data.name(m_data.segments[point.segment].nameIndex);
}

std::vector<RoadPolyline> City::roadPolylines() const
{
    std::vector<RoadPolyline> polylines;
    polylines.reserve(m_data.segments.size());
    for (uint32_t s = 0; s < m_data.segments.size(); ++s) {
        RoadPolyline polyline;
        polyline.roadClass = RoadClass(m_data.segments[s].roadClass);
        for (const format::Coord c : m_data.shape(s))
            polyline.points.push_back(CityData::geo(c));
        polylines.push_back(std::move(polyline));
    }
    return polylines;
}

const QByteArray &City::mapJson() const
{
    std::call_once(m_mapOnce, [this] { m_mapJson = encodeMapJson(roadPolylines(), bounds()); });
    return m_mapJson;
}

size_t City::fileBytes() const
{
    return m_data.header ? size_t(m_data.header->fileSize) : 0;
}

} // namespace taxicore::city
