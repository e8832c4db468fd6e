#pragma once

namespace taxicore {

class ClusterFleet;
class LedgerQueries;

// Brings a cluster node's copy of the fleet in line with the database (ClusterFleet::setResync):
// every booking the ledger has open is applied as committed; a booking open in the copy that the
// ledger has ended takes its end; cars held for a booking the database never confirmed are freed.
// Bookings this node is still committing (not in the ledger yet) are left alone.
void resyncFromLedger(ClusterFleet &fleet, const LedgerQueries &reader);

} // namespace taxicore
