// Fuzzes the OpenStreetMap XML city importer (server/city/OsmImporter through libosmium, then
// the graph, hierarchy and file writer) end to end, as taxicore-import-city runs it on a .osm file.

#include "CityImportCheck.h"
#include "city/OsmImporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!taxicore::city::osmImportAvailable())
        return 0; // a build without libosmium has no .osm importer to fuzz
    taxicore::fuzz::importAndCheck(data, size, QStringLiteral("in.osm"));
    return 0;
}
