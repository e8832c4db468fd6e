#pragma once

#include "wire/HttpTypes.h"

#include <functional>
#include <vector>

namespace taxicore {

// Maps method + path to a handler. Patterns are literal segments and `{name}` placeholders,
// e.g. "/api/v1/bookings/{id}/pickup". A path that exists with another method is answered 405
// with an Allow header; HEAD is served by the GET handler without a body.
class RouteTable {
public:
    using Handler = std::function<ApiResponse(const ApiRequest &)>;

    struct Route {
        HttpMethod method;
        QByteArray pattern;
        std::vector<QByteArray> segments; // empty entry = placeholder
        Handler handler;
        int id; // index for metrics
    };

    struct Match {
        const Route *route = nullptr;
        QList<QByteArray> params;
        ApiResponse error; // 404 / 405 when route is null
    };

    void add(HttpMethod method, const char *pattern, Handler handler);
    Match match(HttpMethod method, const QByteArray &path) const;
    const std::vector<Route> &routes() const { return m_routes; }

    // The metrics index used for requests that matched no route.
    static constexpr int kUnmatchedRouteId = 0;

private:
    static bool matches(const Route &route, const QList<QByteArray> &segments, QList<QByteArray> *params);

    std::vector<Route> m_routes;
};

QByteArray methodName(HttpMethod method);

} // namespace taxicore
