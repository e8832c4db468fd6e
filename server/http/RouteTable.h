#pragma once

#include "wire/HttpTypes.h"

#include <array>
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
        // Cheap and constant (no I/O, no lock, microseconds): answered on the I/O thread even in
        // pool mode, where the hand-off to a pool thread would cost more than the handler.
        bool runsInline = false;
    };

    struct Match {
        const Route *route = nullptr;
        QList<QByteArray> params;
        ApiResponse error; // 404 / 405 when route is null
    };

    void add(HttpMethod method, const char *pattern, Handler handler);
    // A route whose handler is cheap and constant (see Route::runsInline).
    void addInline(HttpMethod method, const char *pattern, Handler handler);
    // Allocates nothing for a path that matches (the hot path); the error answer is built only
    // for 404/405.
    Match match(HttpMethod method, const QByteArray &path) const;
    const std::vector<Route> &routes() const { return m_routes; }

    // The metrics index used for requests that matched no route.
    static constexpr int kUnmatchedRouteId = 0;

    // A path with more segments than this matches no route (no route has that many).
    static constexpr int kMaxSegments = 16;

private:
    struct Segments {
        std::array<QByteArrayView, kMaxSegments> views;
        int count = 0;
        bool tooMany = false;
    };
    static bool matches(const Route &route, const Segments &segments, QList<QByteArray> *params);

    std::vector<Route> m_routes;
};

QByteArray methodName(HttpMethod method);

} // namespace taxicore
