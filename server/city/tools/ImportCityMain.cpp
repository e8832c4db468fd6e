// taxicore-import-city IN OUT: converts OpenStreetMap roads (GeoJSON, .osm, .osm.pbf) into a
// TaxiCore city file.

#include "city/CityImporter.h"

#include <QCoreApplication>
#include <QTextStream>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QTextStream err(stderr);
    QTextStream out(stdout);
    const QStringList args = app.arguments();
    if (args.size() != 3 || args[1].startsWith(QLatin1Char('-'))) {
        err << "usage: taxicore-import-city IN OUT\n"
               "  IN   OpenStreetMap ways: *.geojson/*.json, *.osm or *.osm.pbf\n"
               "  OUT  city file to write (e.g. gothenburg.taxicity)\n";
        return 2;
    }
    taxicore::city::ImportReport report;
    const QString error = taxicore::city::importCity(args[1], args[2], &report);
    if (!error.isEmpty()) {
        err << "taxicore-import-city: " << error << "\n";
        return 1;
    }
    out << "ways read " << report.graph.waysRead << ", drivable " << report.graph.waysDrivable << "\n"
        << "graph before component filter: " << report.graph.nodesBeforeComponentFilter << " nodes, "
        << report.graph.segmentsBeforeComponentFilter << " segments\n"
        << "kept (largest strongly connected component): " << report.nodes << " nodes, " << report.segments
        << " segments\n"
        << "contraction hierarchy: " << report.shortcuts << " shortcuts in " << report.hierarchySeconds << " s\n"
        << "read " << report.readSeconds << " s, graph " << report.buildSeconds << " s\n"
        << "wrote " << args[2] << " (" << report.fileBytes << " bytes)\n";
    return 0;
}
