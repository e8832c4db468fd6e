#include "http/CityApi.h"

#include "city/City.h"
#include "wire/ApiError.h"
#include "wire/ContentNegotiation.h"
#include "wire/GzipBody.h"
#include "http/JsonViews.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <cmath>
#include <memory>

namespace taxicore {

namespace {

struct MapBody {
    QByteArray plain;
    QByteArray gzipped;
    QByteArray etag;     // of the plain body
    QByteArray gzipEtag; // of the gzipped one: a strong tag names one representation
};

ApiResponse mapResponse(const MapBody &map, const ApiRequest &request)
{
    ApiResponse r;
    const bool gzip = !map.gzipped.isEmpty() && acceptsGzip(request.acceptEncoding);
    const QByteArray &etag = gzip ? map.gzipEtag : map.etag;
    r.headers.append({QByteArrayLiteral("ETag"), etag});
    r.headers.append({QByteArrayLiteral("Cache-Control"), QByteArrayLiteral("public, max-age=3600")});
    r.headers.append({QByteArrayLiteral("Vary"), QByteArrayLiteral("Accept-Encoding")});
    if (matchesEtag(request.ifNoneMatch, etag)) {
        r.status = 304;
        return r;
    }
    if (gzip) {
        r.body = map.gzipped;
        r.headers.append({QByteArrayLiteral("Content-Encoding"), QByteArrayLiteral("gzip")});
    } else {
        r.body = map.plain;
    }
    return r;
}

} // namespace

void registerCityRoutes(RouteTable &router, const city::City &city)
{
    router.add(HttpMethod::Get, "/api/v1/route", [&city](const ApiRequest &request) {
        const LatLng from = queryPoint(request, "from_");
        const LatLng to = queryPoint(request, "to_");
        const city::Route route = city.route(city::GeoPoint{from.lat, from.lng}, city::GeoPoint{to.lat, to.lng});
        if (!route.found)
            throwApiError(404, "no_route", QStringLiteral("no road connects these two points"));
        QJsonArray polyline;
        for (const city::GeoPoint &p : route.polyline)
            polyline.append(QJsonArray{std::round(p.lat * 1e6) / 1e6, std::round(p.lng * 1e6) / 1e6});
        return jsonResponse({
            {QStringLiteral("distance_m"), std::round(route.distanceM)},
            {QStringLiteral("duration_s"), std::round(route.durationS)},
            {QStringLiteral("polyline"), polyline},
        });
    });
    // Built once and shared by every request: the streets never change while serving.
    auto map = std::make_shared<MapBody>();
    map->plain = city.mapJson();
    map->gzipped = gzipCompress(map->plain);
    const QByteArray hash = QCryptographicHash::hash(map->plain, QCryptographicHash::Sha1).toHex().left(20);
    map->etag = '"' + hash + '"';
    map->gzipEtag = '"' + hash + ".gz\"";
    router.add(HttpMethod::Get, "/api/v1/map", [map](const ApiRequest &request) { return mapResponse(*map, request); });
}

} // namespace taxicore
