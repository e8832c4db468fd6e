#pragma once

namespace taxicore {

class LedgerLookups;
class LedgerQueries;
class RouteTable;

// Reports from the ledger, for operators (admin token, or trusted loopback): they name every rider.
// GET /api/v1/trips?from=&to= (completed trips) and
// GET /admin/v1/report?from=&to= (trips, revenue, average fare, by hour; `format=csv` for CSV).
// from/to are ms since the epoch or ISO 8601 times; the default is the last 24 hours. Both read the
// ledger on `lookups`' thread, never on the event loop: a long report, or a hung database, holds
// up no other request (503 ledger_unavailable when the ledger cannot answer, ledger_busy when full).
void registerReportRoutes(RouteTable &router, const LedgerQueries &reader, LedgerLookups &lookups);

} // namespace taxicore
