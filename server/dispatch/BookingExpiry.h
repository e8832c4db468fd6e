#pragma once

#include <cstdint>

namespace taxicore {

class FleetStore;
class Ledger;

// The pickup timeout (issue 15, item 3): a booking still assigned or arriving when the pickup
// timeout (simulated seconds since it was made) has passed becomes expired, its car is free
// again, and the ledger records it. That covers riders who never board and orphans (a booking
// committed whose 201 never reached its client). Runs in the primary only (FleetSimulator).
class BookingExpiry {
public:
    static constexpr int kDefaultPickupTimeoutS = 600;
    // Real milliseconds between sweeps: an expiry is late by at most this.
    static constexpr int64_t kSweepIntervalMs = 500;

    BookingExpiry(FleetStore &fleet, Ledger *ledger);

    // The timeout in force: ControlBlock::pickupTimeoutS (--pickup-timeout), else the default.
    int pickupTimeoutS() const;
    // Expires every overdue booking at most once per kSweepIntervalMs of `monotonicNowMs`
    // (clock::monotonicMs: a wall-clock step neither stops the sweeps nor bunches them); returns how many.
    int sweepIfDue(int64_t monotonicNowMs);
    // Expires every overdue booking now; returns how many. A booking's age is on the monotonic
    // clock (BookingSnapshot::createdMonoMs), so a wall-clock step forward expires nothing early (a
    // booking restored after a restart counts its checkpointed age plus the wall-clock time since
    // the checkpoint; without a checkpoint, its wall-clock age).
    int sweep();

private:
    FleetStore &m_fleet;
    Ledger *m_ledger;
    int64_t m_lastSweepMs = INT64_MIN / 2;
};

} // namespace taxicore
