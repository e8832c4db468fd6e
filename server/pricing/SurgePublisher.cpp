#include "pricing/SurgePublisher.h"

#include "fleet/FleetStore.h"
#include "pricing/PricingBoard.h"

namespace taxicore {

SurgePublisher::SurgePublisher(FleetStore &fleet, const SurgeGrid &grid)
    : m_fleet(fleet)
    , m_model(grid)
{
    PricingBoard(m_fleet.pricing()).publishGrid(grid);
}

void SurgePublisher::update(double elapsedS)
{
    std::vector<LatLng> openPickups, availableCars;
    const int count = m_fleet.carCount();
    for (int id = 1; id <= count; ++id) {
        const auto car = m_fleet.car(id);
        if (!car)
            continue;
        if (car->state == CarState::Available) {
            availableCars.push_back(car->position);
        } else if (car->state == CarState::ToPickup || car->state == CarState::Waiting) {
            // Every open booking has a car on its way (a booking is assigned when it is made).
            if (const auto booking = m_fleet.booking(car->bookingId);
                booking && isOpen(booking->state) && booking->state != BookingState::OnTrip)
                openPickups.push_back(booking->pickup);
        }
    }
    PricingBoard pricing(m_fleet.pricing());
    m_model.update(openPickups, availableCars, pricing.tariff(), elapsedS);
    pricing.publishSurge(m_model.surge());
}

} // namespace taxicore
