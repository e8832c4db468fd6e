#include "city/GeoJsonImporter.h"

#include "city/Geo.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace taxicore::city {

namespace {
constexpr qint64 kMaxGeoJsonBytes = qint64(1) << 30;

std::string tag(const QJsonObject &properties, const char *key)
{
    const QJsonValue value = properties.value(QLatin1String(key));
    if (value.isString())
        return value.toString().toStdString();
    if (value.isDouble())
        return QString::number(value.toDouble()).toStdString();
    return {};
}

bool appendLine(const QJsonArray &coordinates, RawWay &way)
{
    for (const QJsonValue &pointValue : coordinates) {
        const QJsonArray point = pointValue.toArray();
        if (point.size() < 2 || !point[0].isDouble() || !point[1].isDouble())
            return false;
        const double lng = point[0].toDouble();
        const double lat = point[1].toDouble();
        if (lat < -90 || lat > 90 || lng < -180 || lng > 180)
            return false;
        const format::Coord c{toCoordUnits(lat), toCoordUnits(lng)};
        way.points.push_back(c);
        way.nodeKeys.push_back(coordinateNodeKey(c));
    }
    return way.points.size() >= 2;
}

RawWay wayTags(const QJsonObject &properties)
{
    RawWay way;
    way.highway = tag(properties, "highway");
    way.name = tag(properties, "name");
    way.oneway = tag(properties, "oneway");
    way.maxspeed = tag(properties, "maxspeed");
    way.junction = tag(properties, "junction");
    way.access = tag(properties, "access");
    way.motorVehicle = tag(properties, "motor_vehicle");
    way.motorcar = tag(properties, "motorcar");
    way.service = tag(properties, "service");
    way.area = tag(properties, "area");
    return way;
}
} // namespace

WayReadResult readGeoJsonWays(const QString &path)
{
    WayReadResult result;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        result.error = QStringLiteral("%1: cannot open: %2").arg(path, file.errorString());
        return result;
    }
    if (file.size() > kMaxGeoJsonBytes) {
        result.error = QStringLiteral("%1: larger than %2 bytes").arg(path).arg(kMaxGeoJsonBytes);
        return result;
    }
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        result.error = QStringLiteral("%1: invalid JSON at byte %2: %3")
                           .arg(path)
                           .arg(parseError.offset)
                           .arg(parseError.errorString());
        return result;
    }
    const QJsonValue features = document.object().value(QLatin1String("features"));
    if (!features.isArray()) {
        result.error = QStringLiteral("%1: not a GeoJSON FeatureCollection").arg(path);
        return result;
    }
    for (const QJsonValue &featureValue : features.toArray()) {
        const QJsonObject feature = featureValue.toObject();
        const QJsonObject properties = feature.value(QLatin1String("properties")).toObject();
        if (!properties.contains(QLatin1String("highway")))
            continue;
        const QJsonObject geometry = feature.value(QLatin1String("geometry")).toObject();
        const QString type = geometry.value(QLatin1String("type")).toString();
        const QJsonArray coordinates = geometry.value(QLatin1String("coordinates")).toArray();
        QList<QJsonArray> lines;
        if (type == QLatin1String("LineString"))
            lines.append(coordinates);
        else if (type == QLatin1String("MultiLineString"))
            for (const QJsonValue &line : coordinates)
                lines.append(line.toArray());
        for (const QJsonArray &line : lines) {
            RawWay way = wayTags(properties);
            if (appendLine(line, way))
                result.ways.push_back(std::move(way));
        }
    }
    return result;
}

} // namespace taxicore::city
