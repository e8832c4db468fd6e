#include "city/OsmImporter.h"

#include "city/Geo.h"

#include <QFileInfo>

#ifdef TAXICORE_HAVE_OSMIUM
#include <osmium/handler.hpp>
#include <osmium/handler/node_locations_for_ways.hpp>
#include <osmium/index/map/flex_mem.hpp>
#include <osmium/io/any_input.hpp>
#include <osmium/visitor.hpp>
#endif

namespace taxicore::city {

#ifdef TAXICORE_HAVE_OSMIUM
namespace {
using LocationIndex = osmium::index::map::FlexMem<osmium::unsigned_object_id_type, osmium::Location>;

std::string tagValue(const osmium::TagList &tags, const char *key)
{
    const char *value = tags.get_value_by_key(key);
    return value ? std::string(value) : std::string();
}

class HighwayCollector : public osmium::handler::Handler {
public:
    explicit HighwayCollector(std::vector<RawWay> &ways)
        : m_ways(ways)
    {
    }

    void way(const osmium::Way &osmWay)
    {
        const osmium::TagList &tags = osmWay.tags();
        if (!tags.has_key("highway"))
            return;
        RawWay way;
        for (const osmium::NodeRef &ref : osmWay.nodes()) {
            if (!ref.location().valid())
                continue; // node outside the extract
            way.nodeKeys.push_back(uint64_t(ref.ref()));
            way.points.push_back({toCoordUnits(ref.location().lat()), toCoordUnits(ref.location().lon())});
        }
        if (way.points.size() < 2)
            return;
        way.highway = tagValue(tags, "highway");
        way.name = tagValue(tags, "name");
        way.oneway = tagValue(tags, "oneway");
        way.maxspeed = tagValue(tags, "maxspeed");
        way.junction = tagValue(tags, "junction");
        way.access = tagValue(tags, "access");
        way.motorVehicle = tagValue(tags, "motor_vehicle");
        way.motorcar = tagValue(tags, "motorcar");
        way.service = tagValue(tags, "service");
        way.area = tagValue(tags, "area");
        m_ways.push_back(std::move(way));
    }

private:
    std::vector<RawWay> &m_ways;
};
} // namespace

bool osmImportAvailable()
{
    return true;
}

WayReadResult readOsmWays(const QString &path)
{
    WayReadResult result;
    if (!QFileInfo(path).isReadable()) {
        result.error = QStringLiteral("%1: cannot open: no such readable file").arg(path);
        return result;
    }
    try {
        osmium::io::Reader reader(path.toStdString(), osmium::osm_entity_bits::node | osmium::osm_entity_bits::way);
        LocationIndex index;
        osmium::handler::NodeLocationsForWays<LocationIndex> locations(index);
        locations.ignore_errors();
        HighwayCollector collector(result.ways);
        osmium::apply(reader, locations, collector);
        reader.close();
    } catch (const std::exception &error) {
        result.ways.clear();
        result.error = QStringLiteral("%1: %2").arg(path, QString::fromUtf8(error.what()));
    }
    return result;
}
#else
bool osmImportAvailable()
{
    return false;
}

WayReadResult readOsmWays(const QString &path)
{
    return {{}, QStringLiteral("%1: this build has no libosmium (install libosmium2-dev)").arg(path)};
}
#endif

} // namespace taxicore::city
