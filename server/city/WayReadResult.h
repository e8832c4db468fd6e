#pragma once

#include "city/RawWay.h"

#include <QString>
#include <vector>

namespace taxicore::city {

// What a reader hands to the graph builder: the ways, or an error naming file and problem.
struct WayReadResult {
    std::vector<RawWay> ways;
    QString error; // empty on success
};

} // namespace taxicore::city
