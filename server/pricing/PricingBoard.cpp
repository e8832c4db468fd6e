#include "pricing/PricingBoard.h"

#include "fleet/FleetStore.h"
#include "region/RegionLayout.h"
#include "region/SlotLock.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace taxicore {

namespace {
constexpr auto relaxed = std::memory_order_relaxed;
}

Tariff PricingBoard::tariff() const
{
    TariffSlot &slot = m_block.tariff;
    SlotLock lock(slot.lock);
    Tariff t;
    if (slot.version.load(relaxed) == 0)
        return t;
    t.currency = QString::fromLatin1(slot.currency, qsizetype(strnlen(slot.currency, kCurrencyBytes)));
    t.base = slot.base;
    t.perKm = slot.perKm;
    t.perMinute = slot.perMinute;
    t.minimum = slot.minimum;
    t.surgeCap = slot.surgeCap;
    t.surgePerExcess = slot.surgePerExcess;
    t.surgeSmoothingS = slot.surgeSmoothingS;
    return t;
}

void PricingBoard::setTariff(const Tariff &t)
{
    TariffSlot &slot = m_block.tariff;
    SlotLock lock(slot.lock);
    const QByteArray currency = t.currency.toLatin1().left(kCurrencyBytes - 1);
    std::memset(slot.currency, 0, sizeof slot.currency);
    std::memcpy(slot.currency, currency.constData(), std::size_t(currency.size()));
    slot.base = t.base;
    slot.perKm = t.perKm;
    slot.perMinute = t.perMinute;
    slot.minimum = t.minimum;
    slot.surgeCap = t.surgeCap;
    slot.surgePerExcess = t.surgePerExcess;
    slot.surgeSmoothingS = t.surgeSmoothingS;
    slot.version.fetch_add(1, relaxed);
}

double PricingBoard::demandRate() const
{
    return m_block.demandRidesPerMinute.load(relaxed);
}

void PricingBoard::setDemandRate(double ridesPerMinute)
{
    m_block.demandRidesPerMinute.store(std::max(0.0, ridesPerMinute), relaxed);
}

void PricingBoard::publishGrid(const SurgeGrid &grid)
{
    SurgeGridSlot &slot = m_block.surge;
    slot.rows.store(0, std::memory_order_release); // readers see "no grid" while it changes
    slot.south.store(grid.south, relaxed);
    slot.west.store(grid.west, relaxed);
    slot.cellLatDeg.store(grid.cellLatDeg, relaxed);
    slot.cellLngDeg.store(grid.cellLngDeg, relaxed);
    const int cells = std::min(grid.cellCount(), kMaxSurgeCells);
    for (int i = 0; i < cells; ++i)
        slot.surge[i].store(1.0f, relaxed);
    slot.cols.store(grid.cols, relaxed);
    slot.rows.store(cells == grid.cellCount() ? grid.rows : 0, std::memory_order_release);
}

void PricingBoard::publishSurge(const std::vector<double> &surge)
{
    SurgeGridSlot &slot = m_block.surge;
    const std::size_t cells = std::min<std::size_t>(surge.size(), kMaxSurgeCells);
    for (std::size_t i = 0; i < cells; ++i)
        slot.surge[i].store(float(surge[i]), relaxed);
    slot.updatedMs.store(clock::wallMs(), std::memory_order_release);
}

SurgeGrid PricingBoard::grid() const
{
    const SurgeGridSlot &slot = m_block.surge;
    SurgeGrid g;
    g.rows = slot.rows.load(std::memory_order_acquire);
    if (g.rows <= 0)
        return SurgeGrid{};
    g.cols = slot.cols.load(relaxed);
    g.south = slot.south.load(relaxed);
    g.west = slot.west.load(relaxed);
    g.cellLatDeg = slot.cellLatDeg.load(relaxed);
    g.cellLngDeg = slot.cellLngDeg.load(relaxed);
    return g;
}

std::vector<double> PricingBoard::surgeCells() const
{
    const SurgeGrid g = grid();
    std::vector<double> cells(std::size_t(std::max(0, g.cellCount())));
    for (std::size_t i = 0; i < cells.size(); ++i)
        cells[i] = double(m_block.surge.surge[i].load(relaxed));
    return cells;
}

double PricingBoard::surgeAt(LatLng p) const
{
    const int cell = grid().cellOf(p);
    if (cell < 0)
        return 1.0;
    // Stored as float: round to cents of a multiplier so every process quotes the same number.
    return std::round(double(m_block.surge.surge[cell].load(relaxed)) * 100.0) / 100.0;
}

int64_t PricingBoard::surgeUpdatedMs() const
{
    return m_block.surge.updatedMs.load(std::memory_order_acquire);
}

void PricingBoard::recordBookingPrice(uint64_t bookingId, const BookingPrice &price)
{
    BookingPriceSlot &slot = m_block.bookings[bookingId % kBookingCapacity];
    slot.bookingId.store(0, std::memory_order_release);
    slot.surge.store(price.surge, relaxed);
    slot.hasQuote.store(price.hasQuote ? 1 : 0, relaxed);
    slot.quotedDistanceM.store(price.quotedDistanceM, relaxed);
    slot.quotedDurationS.store(price.quotedDurationS, relaxed);
    slot.base.store(price.quote.base, relaxed);
    slot.distanceCharge.store(price.quote.distanceCharge, relaxed);
    slot.timeCharge.store(price.quote.timeCharge, relaxed);
    slot.minimum.store(price.quote.minimum, relaxed);
    slot.total.store(price.quote.total, relaxed);
    slot.bookingId.store(bookingId, std::memory_order_release);
}

std::optional<BookingPrice> PricingBoard::bookingPrice(uint64_t bookingId) const
{
    const BookingPriceSlot &slot = m_block.bookings[bookingId % kBookingCapacity];
    if (bookingId == 0 || slot.bookingId.load(std::memory_order_acquire) != bookingId)
        return std::nullopt;
    BookingPrice p;
    p.surge = slot.surge.load(relaxed);
    p.hasQuote = slot.hasQuote.load(relaxed) != 0;
    p.quotedDistanceM = slot.quotedDistanceM.load(relaxed);
    p.quotedDurationS = slot.quotedDurationS.load(relaxed);
    p.quote.base = slot.base.load(relaxed);
    p.quote.distanceCharge = slot.distanceCharge.load(relaxed);
    p.quote.timeCharge = slot.timeCharge.load(relaxed);
    p.quote.minimum = slot.minimum.load(relaxed);
    p.quote.surge = p.surge;
    p.quote.total = slot.total.load(relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.bookingId.load(relaxed) != bookingId)
        return std::nullopt;
    return p;
}

} // namespace taxicore
