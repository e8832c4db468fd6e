#pragma once

namespace taxicore {

class Ledger;
class RouteTable;

// POST /admin/v1/events {"kind":"benchmark","detail":{...}}: an operator (or a tool such as
// `taxicore-bench --record-to`) records an operational event in the ledger. Answered 201 only
// after the event's row is committed, like a booking.
void registerEventRoutes(RouteTable &router, Ledger &ledger);

} // namespace taxicore
