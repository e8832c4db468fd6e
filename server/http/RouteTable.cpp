#include "http/RouteTable.h"

#include "wire/ApiError.h"
#include "metrics/MetricsLimits.h"

namespace taxicore {

QByteArray methodName(HttpMethod method)
{
    switch (method) {
    case HttpMethod::Get:
        return QByteArrayLiteral("GET");
    case HttpMethod::Head:
        return QByteArrayLiteral("HEAD");
    case HttpMethod::Post:
        return QByteArrayLiteral("POST");
    case HttpMethod::Put:
        return QByteArrayLiteral("PUT");
    case HttpMethod::Delete:
        return QByteArrayLiteral("DELETE");
    case HttpMethod::Patch:
        return QByteArrayLiteral("PATCH");
    case HttpMethod::Options:
        return QByteArrayLiteral("OPTIONS");
    case HttpMethod::Other:
        return QByteArrayLiteral("OTHER");
    }
    return {};
}

void RouteTable::add(HttpMethod method, const char *pattern, Handler handler)
{
    Route route{method, QByteArray(pattern), {}, std::move(handler), int(m_routes.size()) + 1};
    Q_ASSERT(route.id < kMetricsRouteSlots);
    for (const QByteArray &segment : route.pattern.split('/')) {
        if (segment.isEmpty())
            continue;
        route.segments.push_back(segment.startsWith('{') ? QByteArray() : segment);
    }
    Q_ASSERT(route.segments.size() <= std::size_t(kMaxSegments));
    m_routes.push_back(std::move(route));
}

void RouteTable::addInline(HttpMethod method, const char *pattern, Handler handler)
{
    add(method, pattern, std::move(handler));
    m_routes.back().runsInline = true;
}

bool RouteTable::matches(const Route &route, const Segments &segments, QList<QByteArray> *params)
{
    if (segments.tooMany || route.segments.size() != std::size_t(segments.count))
        return false;
    for (std::size_t i = 0; i < route.segments.size(); ++i) {
        const QByteArray &want = route.segments[i];
        const QByteArrayView have = segments.views[i];
        if (want.isNull()) {
            if (params)
                params->append(have.toByteArray());
        } else if (QByteArrayView(want) != have) {
            return false;
        }
    }
    return true;
}

RouteTable::Match RouteTable::match(HttpMethod method, const QByteArray &path) const
{
    Match m;
    // Views into `path`, not copies: a request costs no allocation before its handler.
    Segments segments;
    for (qsizetype start = 0; start < path.size();) {
        qsizetype end = path.indexOf('/', start);
        if (end < 0)
            end = path.size();
        if (end > start) {
            if (segments.count == kMaxSegments) {
                segments.tooMany = true;
                break;
            }
            segments.views[std::size_t(segments.count++)] = QByteArrayView(path).sliced(start, end - start);
        }
        start = end + 1;
    }
    const HttpMethod lookFor = method == HttpMethod::Head ? HttpMethod::Get : method;
    QByteArray allowed;
    for (const Route &route : m_routes) {
        if (!matches(route, segments, nullptr))
            continue;
        if (route.method == lookFor) {
            m.route = &route;
            matches(route, segments, &m.params);
            return m;
        }
        allowed += (allowed.isEmpty() ? "" : ", ") + methodName(route.method);
        if (route.method == HttpMethod::Get)
            allowed += ", HEAD";
    }
    if (allowed.isEmpty()) {
        m.error = errorResponse(404, "not_found", QStringLiteral("no such resource: %1").arg(QString::fromUtf8(path)));
    } else {
        // A method no route uses (TRACE, CONNECT, unknown ones) is Other here: its name is not kept.
        const QString what = method == HttpMethod::Other ? QStringLiteral("this request's method")
                                                         : QString::fromLatin1(methodName(method));
        m.error = errorResponse(405, "method_not_allowed",
                                QStringLiteral("%1 is not allowed on %2; allowed: %3")
                                    .arg(what, QString::fromUtf8(path), QString::fromLatin1(allowed)));
        m.error.headers.append({QByteArrayLiteral("Allow"), allowed});
    }
    return m;
}

} // namespace taxicore
