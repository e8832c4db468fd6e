#pragma once

#include <QString>

namespace taxicore {

// Where the bundled city file is: next to an installed binary (../share/taxicore/cities), or in
// the source tree for a build that has not been installed. Empty when neither has it.
QString bundledCityPath();

} // namespace taxicore
