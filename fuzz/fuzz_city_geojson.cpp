// Fuzzes the GeoJSON city importer (server/city/GeoJsonImporter and the graph, hierarchy and
// file writer behind it) end to end, as taxicore-import-city runs it on a .geojson file.

#include "CityImportCheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    taxicore::fuzz::importAndCheck(data, size, QStringLiteral("in.geojson"));
    return 0;
}
