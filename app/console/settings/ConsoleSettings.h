#pragma once

#include "pricing/Tariff.h"
#include "control/RuntimeSettings.h"

#include <optional>

class QCommandLineParser;

namespace taxicore {
struct ServerOptions;
}

// What the console keeps across restarts for the server it embeds (QSettings, the store
// Preferences uses): the execution model last applied, the tariff and the demand rate.
namespace ConsoleSettings {

// Puts the stored values into `options` before the server starts; a flag given on the command
// line (--mode, --workers, --threads, --policy, --tariff, --demand-rate) wins over its stored value.
void restore(taxicore::ServerOptions &options, const QCommandLineParser &parser);

void saveRuntime(const taxicore::RuntimeSettings &runtime);

// The stored tariff, if one was saved and is still valid.
std::optional<taxicore::Tariff> tariff();
void saveTariff(const taxicore::Tariff &tariff);

std::optional<double> demandRate();
void saveDemandRate(double ridesPerMinute);

} // namespace ConsoleSettings
