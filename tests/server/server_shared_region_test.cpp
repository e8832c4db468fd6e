// The shared region holds every car, booking and worker slot: only the processes the primary
// starts as workers may map it. Any other child (the console starts taxicore-bench) must not
// inherit a writable descriptor of it.
#include "region/SharedRegion.h"

#include <QProcess>
#include <QtTest>

using namespace taxicore;

class SharedRegionTest : public QObject {
    Q_OBJECT
private slots:
    void otherChildProcessesDoNotInheritTheRegion()
    {
        QString error;
        const auto region = SharedRegion::create(error);
        QVERIFY2(region, qPrintable(error));
        // A child that is not a worker: list the descriptors it was born with.
        QProcess child;
        child.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("ls -l /proc/$$/fd")});
        QVERIFY(child.waitForFinished(10'000));
        const QByteArray fds = child.readAllStandardOutput();
        QVERIFY2(fds.contains("/proc/") || fds.contains("->"), fds.constData()); // the listing ran
        QVERIFY2(!fds.contains("taxicore-region"), fds.constData());
    }
};

QTEST_GUILESS_MAIN(SharedRegionTest)
#include "server_shared_region_test.moc"
