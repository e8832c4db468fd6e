#pragma once

#include <QObject>
#include <QString>

class ConsoleBackend;
class QCommandLineParser;
class QQmlApplicationEngine;
class QQuickWindow;

// Flags for tests and measurements: --quit-after-ms N, --screenshot PATH (taken just before
// quitting, with a "quit mode=M requests=N benchmark-results=N" line on stdout, or "error window:
// MESSAGE" when the server could not start), --report-fps
// (one "fps N gui-cpu-ms N" line a second on stdout), --panel NAME, --benchmark TARGET,
// --reassign-after-ms N ("reassigned booking B car OLD -> NEW" or "reassign failed: why").
class ConsoleHooks : public QObject {
    Q_OBJECT
public:
    static void addOptions(QCommandLineParser &parser);
    // False with a message naming the flag when a value is bad (--panel nosuch, --quit-after-ms soon).
    static bool checkOptions(const QCommandLineParser &parser, QString &error);
    ConsoleHooks(const QCommandLineParser &parser, QQmlApplicationEngine &engine, const ConsoleBackend &backend);

private:
    void finish();
    void reportFps();
    void reassignNewestBooking();

    const ConsoleBackend &m_backend;
    QQuickWindow *m_window = nullptr;
    QString m_screenshotPath;
    int m_frames = 0;
    qint64 m_lastCpuNs = 0;
};
