#pragma once

// The console tests' common set-up: a throwaway QSettings location (nothing read from or
// written to the user's settings), and ServerOptions parsed from flags the way the console's
// main() reads them. In-process tests over ConsoleBackend (link taxicore_console).

#include "runtime/ServerOptions.h"
#include "settings/ConsoleSettings.h"

#include <QCommandLineParser>
#include <QSettings>
#include <QStringList>

namespace taxicore::test {

// Every QSettings of this process (native and INI, user scope) lives under `directory`.
inline void useSettingsDirectory(const QString &directory)
{
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, directory);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, directory);
}

enum class StoredSettings { Ignore, Restore };

// The options `args` give the console (`taxicore ARGS`); with Restore, the stored settings fill
// in what no flag gave, as at a real start. Bad flags end the test program (a test's own bug).
inline ServerOptions consoleOptions(const QStringList &args, StoredSettings stored = StoredSettings::Restore)
{
    QCommandLineParser parser;
    addServerOptions(parser);
    parser.process(QStringList{QStringLiteral("taxicore")} + args);
    ServerOptions options;
    QString error;
    if (!readServerOptions(parser, options, error))
        qFatal("bad test options: %s", qPrintable(error));
    if (stored == StoredSettings::Restore)
        ConsoleSettings::restore(options, parser);
    return options;
}

} // namespace taxicore::test
