#include "city/MapEncoding.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>

namespace taxicore::city {

namespace {
int64_t quantize(double degrees)
{
    return std::llround(degrees * kMapScale);
}

void appendNumber(QByteArray &out, int64_t value)
{
    out.append(QByteArray::number(qlonglong(value)));
}
} // namespace

QByteArray encodeMapJson(const std::vector<RoadPolyline> &roads, GeoBounds bounds)
{
    QByteArray out;
    out.reserve(qsizetype(roads.size()) * 48);
    out.append("{\"format\":\"").append(kMapFormat).append("\",\"attribution\":\"").append(kMapAttribution);
    out.append("\",\"scale\":");
    appendNumber(out, kMapScale);
    out.append(",\"bounds\":[");
    appendNumber(out, quantize(bounds.min.lat));
    out.append(',');
    appendNumber(out, quantize(bounds.min.lng));
    out.append(',');
    appendNumber(out, quantize(bounds.max.lat));
    out.append(',');
    appendNumber(out, quantize(bounds.max.lng));
    out.append("],\"classes\":[");
    for (int c = 0; c < kRoadClassCount; ++c) {
        if (c > 0)
            out.append(',');
        const std::string_view name = roadClassName(RoadClass(c));
        out.append('"').append(name.data(), qsizetype(name.size())).append('"');
    }
    out.append("],\"roads\":[");
    bool firstRoad = true;
    int64_t lastLat = 0; // the delta cursor runs on across roads
    int64_t lastLng = 0;
    for (const RoadPolyline &road : roads) {
        if (road.points.empty())
            continue;
        out.append(firstRoad ? "[" : ",[");
        firstRoad = false;
        appendNumber(out, int(road.roadClass));
        size_t written = 0;
        for (size_t i = 0; i < road.points.size(); ++i) {
            const int64_t lat = quantize(road.points[i].lat);
            const int64_t lng = quantize(road.points[i].lng);
            const bool last = i + 1 == road.points.size();
            if (written > 0 && lat == lastLat && lng == lastLng && !(last && written == 1))
                continue;
            out.append(',');
            appendNumber(out, lat - lastLat);
            out.append(',');
            appendNumber(out, lng - lastLng);
            lastLat = lat;
            lastLng = lng;
            ++written;
        }
        out.append(']');
    }
    out.append("]}");
    return out;
}

std::optional<DecodedMap> decodeMapJson(const QByteArray &bytes)
{
    QJsonParseError error;
    const QJsonObject root = QJsonDocument::fromJson(bytes, &error).object();
    if (error.error != QJsonParseError::NoError
        || root.value(QLatin1String("format")).toString() != QLatin1String(kMapFormat))
        return std::nullopt;
    const double scale = root.value(QLatin1String("scale")).toDouble();
    const QJsonArray bounds = root.value(QLatin1String("bounds")).toArray();
    if (scale <= 0 || bounds.size() != 4)
        return std::nullopt;
    DecodedMap map;
    map.bounds = {{bounds[0].toDouble() / scale, bounds[1].toDouble() / scale},
                  {bounds[2].toDouble() / scale, bounds[3].toDouble() / scale}};
    int64_t lat = 0;
    int64_t lng = 0;
    for (const QJsonValue &roadValue : root.value(QLatin1String("roads")).toArray()) {
        const QJsonArray road = roadValue.toArray();
        if (road.size() < 3 || road.size() % 2 != 1)
            return std::nullopt;
        const int roadClass = road[0].toInt(-1);
        if (roadClass < 0 || roadClass >= kRoadClassCount)
            return std::nullopt;
        RoadPolyline polyline;
        polyline.roadClass = RoadClass(roadClass);
        for (qsizetype i = 1; i + 1 < road.size(); i += 2) {
            lat += road[i].toInteger();
            lng += road[i + 1].toInteger();
            polyline.points.push_back({lat / scale, lng / scale});
        }
        map.roads.push_back(std::move(polyline));
    }
    return map;
}

} // namespace taxicore::city
