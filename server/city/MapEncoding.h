#pragma once
// The compact street-network form served at GET /api/v1/map (compresses ~8x with gzip):
//
//   {"format":"taxicore-map-1","attribution":"© OpenStreetMap contributors, ODbL 1.0",
//    "scale":100000,"bounds":[minLat,minLng,maxLat,maxLng],
//    "classes":["motorway","trunk",...],
//    "roads":[[class,lat0,lng0,dLat1,dLng1,dLat2,dLng2,...],...]}
//
// Coordinates are integers of 1/scale degree (1e-5 deg, about 1.1 m), each the difference to
// the previous point; the cursor runs on across roads (the first point of a road is relative to
// the last point of the road before; the very first to 0,0). class indexes "classes".
// Consecutive points that round to the same integers are dropped (a road keeps >= 2 points).

#include "city/CityTypes.h"

#include <QByteArray>
#include <optional>
#include <vector>

namespace taxicore::city {

inline constexpr int kMapScale = 100000;
inline constexpr char kMapFormat[] = "taxicore-map-1";
inline constexpr char kMapAttribution[] = "© OpenStreetMap contributors, ODbL 1.0";

QByteArray encodeMapJson(const std::vector<RoadPolyline> &roads, GeoBounds bounds);

struct DecodedMap {
    GeoBounds bounds;
    std::vector<RoadPolyline> roads;
};

// For tests and tools: nullopt when the bytes are not in the format above.
std::optional<DecodedMap> decodeMapJson(const QByteArray &bytes);

} // namespace taxicore::city
