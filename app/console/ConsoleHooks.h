#pragma once

#include <QObject>
#include <QString>

class QCommandLineParser;
class QQmlApplicationEngine;
class QQuickWindow;

// Flags for tests and measurements: --quit-after-ms N, --screenshot PATH (taken just before
// quitting), --report-fps (one "fps N gui-cpu-ms N" line a second on stdout), --panel NAME.
class ConsoleHooks : public QObject
{
    Q_OBJECT
public:
    static void addOptions(QCommandLineParser &parser);
    ConsoleHooks(const QCommandLineParser &parser, QQmlApplicationEngine &engine);

private:
    void finish();
    void reportFps();

    QQuickWindow *m_window = nullptr;
    QString m_screenshotPath;
    int m_frames = 0;
    qint64 m_lastCpuNs = 0;
};
