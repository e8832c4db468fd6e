#include "ConsoleHooks.h"

#include "ConsoleBackend.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickWindow>
#include <QTimer>
#include <cstdio>
#include <ctime>

namespace {
const QString kQuitAfterMs = QStringLiteral("quit-after-ms");
const QString kScreenshot = QStringLiteral("screenshot");
const QString kReportFps = QStringLiteral("report-fps");
const QString kPanel = QStringLiteral("panel");
const QString kBenchmark = QStringLiteral("benchmark");
const QString kReassignAfterMs = QStringLiteral("reassign-after-ms");
// The side panels --panel opens (Main.qml's tabs, in order).
const QStringList kPanels = {QStringLiteral("bookings"), QStringLiteral("server"), QStringLiteral("benchmark"),
                             QStringLiteral("reports")};
// The window needs a moment to lay out its panels before a benchmark starts from the hook.
constexpr int kBenchmarkHookDelayMs = 500;

// CPU time of the calling thread (the GUI thread), in nanoseconds.
qint64 threadCpuNs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
} // namespace

void ConsoleHooks::addOptions(QCommandLineParser &parser)
{
    parser.addOption({kQuitAfterMs, QStringLiteral("Quit after <ms> milliseconds (tests)."), QStringLiteral("ms")});
    parser.addOption({kScreenshot, QStringLiteral("Save the window as PNG to <path> before quitting (tests)."),
                      QStringLiteral("path")});
    parser.addOption({kReportFps, QStringLiteral("Print frames per second and GUI-thread CPU once a second.")});
    parser.addOption({kPanel, QStringLiteral("Open the side panel <name> (bookings, server, benchmark, reports)."),
                      QStringLiteral("name")});
    parser.addOption({kBenchmark,
                      QStringLiteral("Start a benchmark of <target> (a path, scenario or URL) at once (tests)."),
                      QStringLiteral("target")});
    parser.addOption(
        {kReassignAfterMs,
         QStringLiteral("After <ms> milliseconds, reassign the newest open booking from the bookings panel (tests)."),
         QStringLiteral("ms")});
}

bool ConsoleHooks::checkOptions(const QCommandLineParser &parser, QString &error)
{
    if (parser.isSet(kPanel) && !kPanels.contains(parser.value(kPanel))) {
        error = QStringLiteral("--panel must be %1, not \"%2\"")
                    .arg(kPanels.join(QStringLiteral(", ")), parser.value(kPanel));
        return false;
    }
    for (const QString &flag : {kQuitAfterMs, kReassignAfterMs}) {
        bool ok = false;
        if (parser.isSet(flag) && (parser.value(flag).toInt(&ok) < 0 || !ok)) {
            error = QStringLiteral("--%1 must be a whole number of milliseconds (0 or more), not \"%2\"")
                        .arg(flag, parser.value(flag));
            return false;
        }
    }
    if (parser.isSet(kScreenshot) && parser.value(kScreenshot).isEmpty()) {
        error = QStringLiteral("--screenshot needs a file name");
        return false;
    }
    return true;
}

ConsoleHooks::ConsoleHooks(const QCommandLineParser &parser, QQmlApplicationEngine &engine,
                           const ConsoleBackend &backend)
    : m_backend(backend)
{
    const auto roots = engine.rootObjects();
    m_window = roots.isEmpty() ? nullptr : qobject_cast<QQuickWindow *>(roots.first());
    m_screenshotPath = parser.value(kScreenshot);
    if (m_window && parser.isSet(kPanel))
        m_window->setProperty("panel", parser.value(kPanel));

    if (m_window && parser.isSet(kBenchmark)) {
        const QString target = parser.value(kBenchmark);
        QTimer::singleShot(kBenchmarkHookDelayMs, this, [this, target] {
            QMetaObject::invokeMethod(m_window, "startBenchmark", Q_ARG(QVariant, target));
        });
    }

    bool reassignSet = false;
    const int reassignAfter = parser.value(kReassignAfterMs).toInt(&reassignSet);
    if (m_window && reassignSet && reassignAfter >= 0)
        QTimer::singleShot(reassignAfter, this, &ConsoleHooks::reassignNewestBooking);

    bool ok = false;
    const int quitAfter = parser.value(kQuitAfterMs).toInt(&ok);
    if (ok && quitAfter >= 0)
        QTimer::singleShot(quitAfter, this, &ConsoleHooks::finish);

    if (parser.isSet(kReportFps) && m_window) {
        connect(m_window, &QQuickWindow::frameSwapped, this, [this] { ++m_frames; });
        auto *timer = new QTimer(this);
        connect(timer, &QTimer::timeout, this, &ConsoleHooks::reportFps);
        m_lastCpuNs = threadCpuNs();
        timer->start(1000);
    }
}

void ConsoleHooks::finish()
{
    if (!m_screenshotPath.isEmpty() && m_window) {
        QDir().mkpath(QFileInfo(m_screenshotPath).absolutePath());
        const QImage image = m_window->grabWindow();
        if (image.isNull() || !image.save(m_screenshotPath))
            std::fprintf(stderr, "taxicore: could not save screenshot to %s\n", qPrintable(m_screenshotPath));
    }
    if (m_backend.serving()) {
        std::printf("quit mode=%s requests=%lld benchmark-results=%d\n", qPrintable(m_backend.mode()),
                    static_cast<long long>(m_backend.requestsServed()),
                    m_window ? m_window->property("benchmarkResultCount").toInt() : 0);
    } else if (const QObject *text = m_window ? m_window->findChild<QObject *>(QStringLiteral("errorText")) : nullptr) {
        // StartupError.qml is up: what it shows (the tests check that the user sees the cause).
        std::printf("error window: %s\n", qPrintable(text->property("text").toString()));
    }
    std::fflush(stdout);
    QCoreApplication::exit(0);
}

void ConsoleHooks::reassignNewestBooking()
{
    QVariant result;
    QMetaObject::invokeMethod(m_window, "reassignNewestBooking", Q_RETURN_ARG(QVariant, result));
    const QVariantMap move = result.toMap();
    if (move.value(QStringLiteral("ok")).toBool())
        std::printf("reassigned booking %lld car %d -> %d\n", move.value(QStringLiteral("bookingId")).toLongLong(),
                    move.value(QStringLiteral("previousCarId")).toInt(), move.value(QStringLiteral("carId")).toInt());
    else
        std::printf("reassign failed: %s\n", qPrintable(move.value(QStringLiteral("error")).toString()));
    std::fflush(stdout);
}

void ConsoleHooks::reportFps()
{
    const qint64 cpu = threadCpuNs();
    std::printf("fps %d gui-cpu-ms %.1f\n", m_frames, double(cpu - m_lastCpuNs) / 1e6);
    std::fflush(stdout);
    m_frames = 0;
    m_lastCpuNs = cpu;
}
