#pragma once

#include "pricing/SurgeModel.h"

namespace taxicore {

class FleetStore;

// The one place surge is computed (the primary's simulator thread): counts open bookings
// (assigned or arriving: their cars are on the way) by pickup zone and available cars by
// position, moves the SurgeModel and publishes every cell in the shared region, where every
// process's quotes read it (PricingBoard::surgeAt).
class SurgePublisher {
public:
    SurgePublisher(FleetStore &fleet, const SurgeGrid &grid);
    void update(double elapsedS);
    const SurgeModel &model() const { return m_model; }

private:
    FleetStore &m_fleet;
    SurgeModel m_model;
};

} // namespace taxicore
