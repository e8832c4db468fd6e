#include "http/CarsHeldElsewhere.h"

#include "fleet/FleetStore.h"

#include <QThread>
#include <algorithm>
#include <chrono>

namespace taxicore {

namespace {

// A claim ends with its commit, normally within milliseconds: looked at this often meanwhile.
constexpr int kPollMs = 5;

bool heldForOtherNode(const FleetStore &fleet, int carId)
{
    // A booking of this copy writes its id into the car right after taking it (a moment only).
    const auto car = fleet.car(carId);
    return car && car->state == CarState::ToPickup && car->bookingId == 0;
}

} // namespace

std::vector<int> carsHeldForOtherNodes(const FleetStore &fleet)
{
    std::vector<int> held;
    for (int id = 1; id <= fleet.carCount(); ++id)
        if (heldForOtherNode(fleet, id))
            held.push_back(id);
    return held;
}

bool waitUntilLetGo(const FleetStore &fleet, std::vector<int> cars, int limitMs)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limitMs);
    for (;;) {
        std::erase_if(cars, [&fleet](int id) { return !heldForOtherNode(fleet, id); });
        if (cars.empty())
            return true;
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        QThread::msleep(kPollMs);
    }
}

} // namespace taxicore
