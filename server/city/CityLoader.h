#pragma once
// Maps a city file and validates every count, offset and index in it, so that routing code can
// trust the data without further checks. Errors name the file and the problem.

#include "city/CityData.h"

#include <QFile>
#include <QString>

namespace taxicore::city {

// Opens, maps and validates `file` (not yet open). Fills `data` on success and returns an empty
// string; otherwise returns the error. The mapping lives as long as `file`.
QString mapCityFile(QFile &file, CityData &data);

} // namespace taxicore::city
