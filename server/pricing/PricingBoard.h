#pragma once

#include "fleet/FleetTypes.h"
#include "pricing/SurgeModel.h"
#include "pricing/Tariff.h"

#include <optional>
#include <vector>

namespace taxicore {

struct PricingBlock;

// What a booking was priced at when it was made: the surge of its pickup zone then, and the
// quote when it named a drop-off (that quote is the fare it will be charged).
struct BookingPrice {
    double surge = 1.0;
    bool hasQuote = false;
    double quotedDistanceM = 0;
    double quotedDurationS = 0;
    FareBreakdown quote; // when hasQuote
};

// Pricing in the shared region, the same for every process: the tariff in force, the demand
// rate, the surge grid (written by the primary only) and each booking's price. Any thread, any
// process.
class PricingBoard {
public:
    // The highest demand rate accepted (--demand-rate, PUT /admin/v1/demand).
    static constexpr double kMaxDemandRatePerMinute = 6000;

    explicit PricingBoard(PricingBlock &block)
        : m_block(block)
    {
    }

    Tariff tariff() const; // the built-in defaults until one is set
    void setTariff(const Tariff &tariff);

    double demandRate() const; // rides per minute; 0 = off
    void setDemandRate(double ridesPerMinute);

    // The primary publishes the grid once, then each cell's surge as it changes.
    void publishGrid(const SurgeGrid &grid);
    void publishSurge(const std::vector<double> &surge);
    SurgeGrid grid() const;
    std::vector<double> surgeCells() const; // row-major; empty before the grid is published
    double surgeAt(LatLng p) const;         // 1 outside the grid or before it is published
    int64_t surgeUpdatedMs() const;

    void recordBookingPrice(uint64_t bookingId, const BookingPrice &price);
    std::optional<BookingPrice> bookingPrice(uint64_t bookingId) const;

private:
    PricingBlock &m_block;
};

} // namespace taxicore
