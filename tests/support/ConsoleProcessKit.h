#pragma once

// Tests that run the taxicore console binary as a child process: the binary, its environment
// (offscreen, or a real window under Xvfb for the screenshot tests), where the PNGs are kept,
// and counting pixels of a colour in a screenshot.

#include <QColor>
#include <QDir>
#include <QImage>
#include <QProcessEnvironment>
#include <QRect>
#include <QString>

namespace taxicore::test {

inline QString consoleBinary()
{
    return qEnvironmentVariable("TAXICORE_BIN_DIR") + QStringLiteral("/taxicore");
}

// This process's environment with the offscreen platform (no display needed).
inline QProcessEnvironment offscreenEnvironment()
{
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    return env;
}

// This process's environment for the console in a real (xcb) window, its settings under
// `configHome` (default layout, no benchmark history).
inline QProcessEnvironment windowedEnvironment(const QString &configHome)
{
    auto env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("QT_QUICK_BACKEND"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), configHome);
    return env;
}

// $TAXICORE_ARTIFACT_DIR (ctest: <build>/test-artifacts), created; the temp dir outside ctest.
inline QString artifactDir()
{
    const QString dir = qEnvironmentVariable("TAXICORE_ARTIFACT_DIR", QDir::tempPath());
    QDir().mkpath(dir);
    return dir;
}

// Pixels of `area` within `tolerance` of `colour` in each channel.
inline int countNear(const QImage &image, const QRect &area, const QColor &colour, int tolerance)
{
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); ++y) {
        const auto *line = reinterpret_cast<const QRgb *>(image.constScanLine(y));
        for (int x = area.left(); x <= area.right(); ++x) {
            const QRgb p = line[x];
            n += qAbs(qRed(p) - colour.red()) <= tolerance && qAbs(qGreen(p) - colour.green()) <= tolerance
                 && qAbs(qBlue(p) - colour.blue()) <= tolerance;
        }
    }
    return n;
}

} // namespace taxicore::test
