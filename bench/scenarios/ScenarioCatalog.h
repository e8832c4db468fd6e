#pragma once

#include "Scenario.h"

#include <optional>
#include <string_view>
#include <vector>

namespace taxicore::bench {

// The built-in scenarios, in the order --list-scenarios shows them.
const std::vector<Scenario> &builtInScenarios();
std::optional<Scenario> findScenario(std::string_view name);

} // namespace taxicore::bench
