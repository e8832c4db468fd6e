#pragma once

namespace taxicore {

class FleetStore;
class LedgerQueries;

// A move (pickup, complete, cancel, expire, reassign) is reserved in the shared fleet by the
// process serving it and settled by that process once its commit is done. A worker killed while
// its commit was in flight never settles it: the booking would answer 409 move_in_progress for
// good, never expire, and keep its car out of service until a restart. The primary settles each
// such move of dead process `pid` as the ledger has the booking: applied when the commit landed,
// let go when it did not (the rider, who got no answer, may try again). A booking the dead process
// made and could not commit is withdrawn (its car is free again): it was never acknowledged. A car
// it had taken for a booking it had not yet written is free again (FleetStore::settleCarClaimsOf).
// Returns 0 when done, else (the ledger could not be read; the try stopped at the first failed
// lookup) nonzero: call again later.
// `reader` null (no ledger, so nothing awaits a commit): every move is let go, every booking stays.
int settleAbandonedMoves(FleetStore &fleet, const LedgerQueries *reader, int pid);

} // namespace taxicore
