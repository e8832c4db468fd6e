#include "http/CarsHeldElsewhere.h"

#include "fleet/BookingState.h"
#include "fleet/FleetStore.h"

#include <QThread>
#include <algorithm>
#include <chrono>

namespace taxicore {

namespace {

// A claim ends with its commit, normally within milliseconds: looked at this often meanwhile.
constexpr int kPollMs = 5;

bool servesOpenBooking(const FleetStore &fleet, const CarSnapshot &car)
{
    if (car.bookingId == 0)
        return false;
    const auto booking = fleet.booking(car.bookingId);
    return booking && booking->carId == car.id && isOpen(booking->state);
}

// A hold keeps whatever booking id the car had: 0, or, once its last booking ended, that one (a
// free car may still name it). A booking of this copy writes its id into the car a moment after
// taking it (0 until then).
bool heldForOtherNode(const FleetStore &fleet, const CarSnapshot &car)
{
    return car.state == CarState::ToPickup && !servesOpenBooking(fleet, car);
}

} // namespace

std::vector<int> carsHeldForOtherNodes(const FleetStore &fleet)
{
    std::vector<int> held;
    for (int id = 1; id <= fleet.carCount(); ++id)
        if (const auto car = fleet.car(id); car && heldForOtherNode(fleet, *car))
            held.push_back(id);
    return held;
}

HeldCarsEnd waitForTheirBookings(const FleetStore &fleet, std::vector<int> cars, int limitMs)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limitMs);
    bool letGoUnbooked = false;
    for (;;) {
        std::erase_if(cars, [&](int id) {
            const auto car = fleet.car(id);
            if (car && heldForOtherNode(fleet, *car))
                return false;
            letGoUnbooked = letGoUnbooked || !car || !servesOpenBooking(fleet, *car);
            return true;
        });
        if (cars.empty())
            return letGoUnbooked ? HeldCarsEnd::Unknown : HeldCarsEnd::Booked;
        if (std::chrono::steady_clock::now() >= deadline)
            return HeldCarsEnd::Unknown;
        QThread::msleep(kPollMs);
    }
}

} // namespace taxicore
