#pragma once
// A loaded city: the road network of one city file, memory-mapped read-only, with snapping,
// fastest routes, one-to-many ETAs and map geometry. Every const function is safe to call from
// many threads at once (searches keep their state per call). Load once per process and share.

#include "city/CityData.h"
#include "city/CityTypes.h"

#include <QByteArray>
#include <QString>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <vector>

class QFile;

namespace taxicore::city {

class City;
class EtaSearch;
class Router;
class Snapper;

struct CityLoadResult {
    std::shared_ptr<const City> city; // null on error
    QString error;                    // "<path>: <problem>", empty on success
};

class City {
public:
    // Missing, truncated, corrupt (checksum), foreign (magic, version) or inconsistent files
    // give an error naming the file and the problem; nothing is trusted before it is checked.
    static CityLoadResult load(const QString &path);
    ~City();
    City(const City &) = delete;
    City &operator=(const City &) = delete;

    GeoBounds bounds() const;
    GeoPoint centre() const;

    // The nearest point on any road; any finite coordinate snaps (invalid for NaN).
    RoadPoint snap(GeoPoint point) const;
    // The version of snap()'s rules. Raise it with any change that can move a point's snap to
    // another segment or offset: cluster nodes share the places they located only when their
    // city file and this version are the same (SharedMemoryFleet::placesKey).
    static constexpr uint32_t kSnapRulesVersion = 1;

    // Fastest route by travel time, honouring one-way streets; starts and ends at the snapped
    // points (partial segments counted). found is false only if the points are not connected.
    Route route(const RoadPoint &from, const RoadPoint &to) const;
    Route route(GeoPoint from, GeoPoint to) const;

    // Seconds by road from each source to the target (one reverse search); kUnreachable for
    // sources further than maxSeconds or invalid.
    std::vector<double> etaTo(const RoadPoint &target, std::span<const RoadPoint> sources, double maxSeconds) const;

    // A point uniformly distributed over the length of all roads (for spawning cars).
    RoadPoint randomRoadPoint(std::mt19937_64 &rng) const;

    // The street name at a road point ("" when unnamed), UTF-8.
    std::string_view streetName(const RoadPoint &point) const;

    // Every road segment as a polyline with its class, for drawing.
    std::vector<RoadPolyline> roadPolylines() const;

    // The /api/v1/map body (see MapEncoding.h), built on first use and then shared.
    const QByteArray &mapJson() const;

    // Raw graph (tests, tools) and the size of the mapped file.
    const CityData &data() const { return m_data; }
    size_t fileBytes() const;

private:
    City();

    std::unique_ptr<QFile> m_file;
    CityData m_data;
    std::unique_ptr<Snapper> m_snapper;
    std::unique_ptr<Router> m_router;
    std::unique_ptr<EtaSearch> m_etaSearch;
    std::vector<double> m_cumulativeLength; // prefix sums of segment lengths
    mutable std::once_flag m_mapOnce;
    mutable QByteArray m_mapJson;
};

} // namespace taxicore::city
