// EpollEventDispatcher's timers against what Qt's dispatcher tests ask of timers: precise, coarse
// and very coarse ones fire at about their interval, zero timers run every iteration without
// starving others, single shots fire once, a timer may kill itself in its own event, and
// registeredTimers / remainingTime report what was started. Margins are wide: the machine is shared.

#include "EpollTestMain.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QObject>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

using namespace taxicore;

namespace {

// A timer may fire late on a loaded machine, never early by more than its type allows.
constexpr int kLateSlackMs = 1500;

// Counts its timer events and kills each timer in its own event when asked.
class TimerCounter : public QObject {
public:
    int fired = 0;
    int lastId = 0;
    bool killInEvent = false;
    QList<qint64> firedAtMs;
    QElapsedTimer clock;

    TimerCounter() { clock.start(); }

protected:
    void timerEvent(QTimerEvent *event) override
    {
        ++fired;
        lastId = event->timerId();
        firedAtMs.append(clock.elapsed());
        if (killInEvent)
            killTimer(event->timerId());
    }
};

} // namespace

class EventLoopTimersTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY2(test::epollDispatcher(), "the main thread must run on EpollEventDispatcher"); }

    void intervalTimersFireAtTheirInterval_data()
    {
        QTest::addColumn<Qt::TimerType>("type");
        QTest::addColumn<int>("intervalMs");
        QTest::addColumn<int>("earlyMs"); // how early the type may fire
        QTest::newRow("precise 20 ms") << Qt::PreciseTimer << 20 << 0;
        QTest::newRow("precise 100 ms") << Qt::PreciseTimer << 100 << 0;
        QTest::newRow("coarse 10 ms (precise below 20)") << Qt::CoarseTimer << 10 << 0;
        QTest::newRow("coarse 200 ms") << Qt::CoarseTimer << 200 << 10;
        QTest::newRow("very coarse 1 s") << Qt::VeryCoarseTimer << 1000 << 500;
    }
    void intervalTimersFireAtTheirInterval()
    {
        QFETCH(Qt::TimerType, type);
        QFETCH(int, intervalMs);
        QFETCH(int, earlyMs);
        TimerCounter counter;
        const int shots = 3;
        QElapsedTimer clock;
        clock.start();
        const int id = counter.startTimer(intervalMs, type);
        QVERIFY(id > 0);
        QTRY_VERIFY_WITH_TIMEOUT(counter.fired >= shots, shots * intervalMs + kLateSlackMs * 2);
        const qint64 elapsed = clock.elapsed();
        counter.killTimer(id);
        // Three periods cannot pass in less than three intervals (less what the type may round off).
        QVERIFY2(elapsed >= shots * intervalMs - earlyMs, qPrintable(QString::number(elapsed)));
        QVERIFY2(elapsed <= shots * intervalMs + kLateSlackMs, qPrintable(QString::number(elapsed)));
        // The first shot is not early either.
        QVERIFY2(counter.firedAtMs.first() >= intervalMs - earlyMs,
                 qPrintable(QString::number(counter.firedAtMs.first())));
    }

    void zeroTimerRunsEveryIterationWithoutStarvingOthers()
    {
        TimerCounter zero;
        TimerCounter slow;
        const int zeroId = zero.startTimer(0);
        slow.startTimer(50);
        // A zero timer keeps the loop busy, yet the 50 ms timer must still come.
        QTRY_VERIFY_WITH_TIMEOUT(slow.fired >= 2, 3000);
        QVERIFY2(zero.fired > 10, qPrintable(QString::number(zero.fired)));
        // Each processEvents fires it at most once.
        const int before = zero.fired;
        QCoreApplication::processEvents();
        QCOMPARE(zero.fired, before + 1);
        zero.killTimer(zeroId);
        QCoreApplication::processEvents();
        QCOMPARE(zero.fired, before + 1);
    }

    void singleShotFiresOnce()
    {
        int calls = 0;
        QTimer::singleShot(30, Qt::PreciseTimer, this, [&calls] { ++calls; });
        QTimer::singleShot(30, Qt::CoarseTimer, this, [&calls] { ++calls; });
        QTRY_COMPARE_WITH_TIMEOUT(calls, 2, 3000);
        QTest::qWait(200);
        QCOMPARE(calls, 2);
    }

    void timerKilledInItsOwnEventNeverFiresAgain()
    {
        TimerCounter counter;
        counter.killInEvent = true;
        counter.startTimer(10);
        counter.startTimer(0);
        QTRY_COMPARE_WITH_TIMEOUT(counter.fired, 2, 3000);
        QTest::qWait(100);
        QCOMPARE(counter.fired, 2);
        QVERIFY(QAbstractEventDispatcher::instance()->registeredTimers(&counter).isEmpty());
    }

    void qtimerStopInTimeoutAndRestart()
    {
        QTimer timer;
        timer.setInterval(20);
        int shots = 0;
        connect(&timer, &QTimer::timeout, this, [&] {
            ++shots;
            timer.stop();
            if (shots < 3)
                timer.start(); // restarted from inside its own timeout
        });
        timer.start();
        QTRY_COMPARE_WITH_TIMEOUT(shots, 3, 3000);
        QTest::qWait(100);
        QCOMPARE(shots, 3);
        QVERIFY(!timer.isActive());
    }

    void registeredTimersAndRemainingTime()
    {
        TimerCounter counter;
        auto *dispatcher = QAbstractEventDispatcher::instance();
        const int a = counter.startTimer(5000, Qt::PreciseTimer);
        const int b = counter.startTimer(60'000, Qt::CoarseTimer);
        const auto timers = dispatcher->registeredTimers(&counter);
        QCOMPARE(timers.size(), 2);
        for (const auto &info : timers) {
            if (info.timerId == a) {
                QCOMPARE(info.interval, 5000);
                QCOMPARE(info.timerType, Qt::PreciseTimer);
            } else {
                QCOMPARE(info.timerId, b);
                QCOMPARE(info.interval, 60'000);
                QCOMPARE(info.timerType, Qt::CoarseTimer);
            }
        }
        const int left = dispatcher->remainingTime(a);
        QVERIFY2(left > 3000 && left <= 5000, qPrintable(QString::number(left)));
        QTimer timer; // a coarse timer: its deadline may move by 5 % to a shared boundary
        timer.start(800);
        QVERIFY2(timer.remainingTime() > 700 && timer.remainingTime() <= 840,
                 qPrintable(QString::number(timer.remainingTime())));
        QCOMPARE(dispatcher->remainingTime(987654), -1);
        QVERIFY(dispatcher->unregisterTimer(a));
        QVERIFY(!dispatcher->unregisterTimer(a));
        QCOMPARE(dispatcher->remainingTime(a), -1);
        // Deleting the object drops the rest (QObject's destructor calls unregisterTimers).
        auto *owned = new TimerCounter;
        owned->startTimer(10);
        owned->startTimer(20);
        QCOMPARE(dispatcher->registeredTimers(owned).size(), 2);
        QVERIFY(dispatcher->unregisterTimers(owned));
        QVERIFY(dispatcher->registeredTimers(owned).isEmpty());
        QVERIFY(!dispatcher->unregisterTimers(owned));
        delete owned;
    }

    void timerNotFiredAgainInsideItsOwnNestedLoop()
    {
        QTimer timer;
        timer.setInterval(10);
        int entered = 0;
        int nestedEntries = 0;
        bool inside = false;
        connect(&timer, &QTimer::timeout, this, [&] {
            ++entered;
            if (inside)
                ++nestedEntries;
            if (entered > 1)
                return;
            inside = true;
            QTest::qWait(100); // a nested loop: ten periods pass, the timer must not re-enter
            inside = false;
        });
        timer.start();
        QTRY_VERIFY_WITH_TIMEOUT(entered >= 2, 3000);
        timer.stop();
        QCOMPARE(nestedEntries, 0);
    }

    void manyTimersFireInDeadlineOrder()
    {
        QList<int> order;
        for (int i = 5; i >= 1; --i)
            QTimer::singleShot(i * 40, Qt::PreciseTimer, this, [&order, i] { order.append(i); });
        QTRY_COMPARE_WITH_TIMEOUT(order.size(), 5, 5000);
        QCOMPARE(order, (QList<int>{1, 2, 3, 4, 5}));
    }
};

TAXICORE_EPOLL_TEST_MAIN(EventLoopTimersTest)
#include "eventloop_timers_test.moc"
