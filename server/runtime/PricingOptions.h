#pragma once

class QCommandLineParser;
class QString;

namespace taxicore {

struct ServerOptions;

// --tariff FILE and --demand-rate N (issue 4): added to and read with the other server flags.
// A bad tariff file is an error naming the file and the field.
void addPricingOptions(QCommandLineParser &parser);
bool readPricingOptions(const QCommandLineParser &parser, ServerOptions &options, QString &error);

} // namespace taxicore
