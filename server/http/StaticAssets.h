#pragma once

namespace taxicore {

class RouteTable;

// The rider page (resources/web, compiled in as Qt resources by server/http/web-assets.cmake):
//   GET /  and  GET /carbooking.html  → index.html (Cache-Control: no-cache, revalidated by ETag)
//   GET /assets/{file}                → the page's JS and CSS (long-lived: the page links them
//                                       with ?v=<content hash>)
// Every body, its gzip form and strong ETags are built once here; If-None-Match → 304,
// Accept-Encoding: gzip → the gzip body. HEAD is served by the router without a body.
void registerStaticRoutes(RouteTable &router);

} // namespace taxicore
