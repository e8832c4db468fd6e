#pragma once

namespace taxicore {

class LedgerQueries;
class RouteTable;

// Reports from the ledger: GET /api/v1/trips?from=&to= (completed trips) and
// GET /admin/v1/report?from=&to= (trips, revenue, average fare, by hour; `format=csv` for CSV).
// from/to are ms since the epoch or ISO 8601 times; the default is the last 24 hours.
void registerReportRoutes(RouteTable &router, const LedgerQueries &reader);

} // namespace taxicore
