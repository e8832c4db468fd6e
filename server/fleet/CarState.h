#pragma once

#include <QLatin1StringView>
#include <cstdint>

namespace taxicore {

// What a car is doing; stored as an atomic in its shared-memory slot. Waiting: at the pickup,
// for its rider to board (the booking is arriving).
enum class CarState : uint32_t { Offline = 0, Available = 1, ToPickup = 2, OnTrip = 3, Waiting = 4 };

inline QLatin1StringView carStateName(CarState state)
{
    switch (state) {
    case CarState::Offline:
        return QLatin1StringView("offline");
    case CarState::Available:
        return QLatin1StringView("available");
    case CarState::ToPickup:
        return QLatin1StringView("to_pickup");
    case CarState::OnTrip:
        return QLatin1StringView("on_trip");
    case CarState::Waiting:
        return QLatin1StringView("waiting");
    }
    return QLatin1StringView("offline");
}

} // namespace taxicore
