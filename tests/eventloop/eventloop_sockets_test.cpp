// EpollEventDispatcher's socket notifiers, posted events and wake-ups, as Qt's dispatcher tests
// ask of them: enable/disable, a read and a write notifier on one descriptor (one epoll entry),
// a notifier deleted by another's handler in the same batch, a hang-up, posted and deferred-delete
// events, wakeUp from another thread ending a blocked processEvents, interrupt(), and a
// QTcpServer/QTcpSocket echo over loopback, and write() + flush() per answer changing no epoll mask.

#include "EpollTestMain.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QPointer>
#include <QSignalSpy>
#include <QSocketNotifier>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <fcntl.h>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

using namespace taxicore;

namespace {

// How long a blocked wait must stay blocked to count as blocked, and how long it may take to end.
constexpr int kBlockedMs = 300;
constexpr int kWakeWithinMs = 5000;

struct SocketPair {
    int a = -1;
    int b = -1;
    SocketPair()
    {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0) {
            a = fds[0];
            b = fds[1];
        }
    }
    ~SocketPair()
    {
        if (a >= 0)
            ::close(a);
        if (b >= 0)
            ::close(b);
    }
    void closeB()
    {
        ::close(b);
        b = -1;
    }
};

void drain(int fd)
{
    char buffer[256];
    while (::read(fd, buffer, sizeof buffer) > 0) {
    }
}

class PostedCounter : public QObject {
public:
    int events = 0;
    QEventLoop *quitOnEvent = nullptr;

protected:
    void customEvent(QEvent *) override
    {
        ++events;
        if (quitOnEvent)
            quitOnEvent->quit();
    }
};

} // namespace

class EventLoopSocketsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY2(test::epollDispatcher(), "the main thread must run on EpollEventDispatcher"); }

    void readNotifierFollowsEnable()
    {
        SocketPair pair;
        QVERIFY(pair.a >= 0);
        QSocketNotifier notifier(pair.a, QSocketNotifier::Read);
        int activations = 0;
        connect(&notifier, &QSocketNotifier::activated, this, [&] {
            ++activations;
            drain(pair.a);
        });
        QCoreApplication::processEvents();
        QCOMPARE(activations, 0); // nothing to read yet
        QCOMPARE(::write(pair.b, "x", 1), 1);
        QTRY_COMPARE_WITH_TIMEOUT(activations, 1, kWakeWithinMs);

        notifier.setEnabled(false);
        QCOMPARE(::write(pair.b, "y", 1), 1);
        QTest::qWait(100);
        QCOMPARE(activations, 1); // disabled: the byte waits
        notifier.setEnabled(true);
        QTRY_COMPARE_WITH_TIMEOUT(activations, 2, kWakeWithinMs);
    }

    void levelTriggeredUntilRead()
    {
        SocketPair pair;
        QSocketNotifier notifier(pair.a, QSocketNotifier::Read);
        int activations = 0;
        connect(&notifier, &QSocketNotifier::activated, this, [&] { ++activations; });
        QCOMPARE(::write(pair.b, "x", 1), 1);
        // Not read: Qt's notifiers keep firing while data waits.
        QTRY_VERIFY_WITH_TIMEOUT(activations >= 3, kWakeWithinMs);
        drain(pair.a);
        QCoreApplication::processEvents();
        const int settled = activations;
        QTest::qWait(100);
        QCOMPARE(activations, settled);
    }

    void readAndWriteNotifiersOnOneDescriptor()
    {
        SocketPair pair;
        QSocketNotifier reader(pair.a, QSocketNotifier::Read);
        QSocketNotifier writer(pair.a, QSocketNotifier::Write);
        int reads = 0;
        int writes = 0;
        connect(&reader, &QSocketNotifier::activated, this, [&] {
            ++reads;
            drain(pair.a);
        });
        connect(&writer, &QSocketNotifier::activated, this, [&] {
            ++writes;
            writer.setEnabled(false); // writable at once; one activation is what we look for
        });
        QTRY_COMPARE_WITH_TIMEOUT(writes, 1, kWakeWithinMs);
        QCOMPARE(reads, 0);
        // The write notifier off must leave the reader in the (shared) epoll entry.
        QCOMPARE(::write(pair.b, "x", 1), 1);
        QTRY_COMPARE_WITH_TIMEOUT(reads, 1, kWakeWithinMs);
        QCOMPARE(test::epollDispatcher()->watchedDescriptors() >= 1, true);
        // And the reader off must leave the writer.
        reader.setEnabled(false);
        writer.setEnabled(true);
        QTRY_COMPARE_WITH_TIMEOUT(writes, 2, kWakeWithinMs);
        QCOMPARE(::write(pair.b, "y", 1), 1);
        QTest::qWait(100);
        QCOMPARE(reads, 1);
    }

    void notifierDeletedByAnotherHandlerInTheSameBatch()
    {
        SocketPair first;
        SocketPair second;
        auto *one = new QSocketNotifier(first.a, QSocketNotifier::Read, this);
        QPointer<QSocketNotifier> two = new QSocketNotifier(second.a, QSocketNotifier::Read, this);
        int oneFired = 0;
        int twoFired = 0;
        // Whichever runs first deletes the other: both are ready in one epoll_wait.
        connect(one, &QSocketNotifier::activated, this, [&] {
            ++oneFired;
            drain(first.a);
            delete two.data();
        });
        connect(two, &QSocketNotifier::activated, this, [&] {
            ++twoFired;
            drain(second.a);
            delete one;
            one = nullptr;
        });
        QCOMPARE(::write(first.b, "x", 1), 1);
        QCOMPARE(::write(second.b, "x", 1), 1);
        QTRY_COMPARE_WITH_TIMEOUT(oneFired + twoFired, 1, kWakeWithinMs);
        QTest::qWait(100);
        QCOMPARE(oneFired + twoFired, 1);
        delete one;
        delete two.data();
    }

    void notifierDeletingItselfWhileReadAndWriteAreReady()
    {
        SocketPair pair;
        auto *reader = new QSocketNotifier(pair.a, QSocketNotifier::Read);
        QPointer<QSocketNotifier> writer = new QSocketNotifier(pair.a, QSocketNotifier::Write);
        int reads = 0;
        int writes = 0;
        connect(reader, &QSocketNotifier::activated, this, [&] {
            ++reads;
            delete writer.data(); // the write half of the same event must not reach it
            delete reader;
            reader = nullptr;
        });
        connect(writer, &QSocketNotifier::activated, this, [&] { ++writes; });
        QCOMPARE(::write(pair.b, "x", 1), 1);
        QTRY_COMPARE_WITH_TIMEOUT(reads, 1, kWakeWithinMs);
        QCOMPARE(writes, 0);
        QTest::qWait(50);
        QCOMPARE(reads, 1);
        QCOMPARE(test::epollDispatcher()->counters().epollRebuilds, 0u);
    }

    void hangUpReachesTheReader()
    {
        SocketPair pair;
        QSocketNotifier reader(pair.a, QSocketNotifier::Read);
        int activations = 0;
        bool sawEnd = false;
        connect(&reader, &QSocketNotifier::activated, this, [&] {
            ++activations;
            char byte;
            if (::read(pair.a, &byte, 1) == 0) {
                sawEnd = true;
                reader.setEnabled(false);
            }
        });
        pair.closeB();
        QTRY_VERIFY_WITH_TIMEOUT(sawEnd, kWakeWithinMs);
    }

    void hangUpWithOnlyAWriterDoesNotSpin()
    {
        SocketPair pair;
        QSocketNotifier writer(pair.a, QSocketNotifier::Write);
        int writes = 0;
        connect(&writer, &QSocketNotifier::activated, this, [&] {
            ++writes;
            if (::send(pair.a, "x", 1, MSG_NOSIGNAL) < 0)
                writer.setEnabled(false); // the peer is gone: what a socket's writer does
        });
        pair.closeB();
        QTRY_VERIFY_WITH_TIMEOUT(!writer.isEnabled(), kWakeWithinMs);
    }

    void postedEventsAndDeferredDelete()
    {
        PostedCounter counter;
        for (int i = 0; i < 5; ++i)
            QCoreApplication::postEvent(&counter, new QEvent(QEvent::User));
        QCoreApplication::processEvents();
        QCOMPARE(counter.events, 5);

        QPointer<QObject> doomed = new QObject;
        doomed->deleteLater();
        // Deferred deletes posted outside any loop go with the next loop that runs.
        QEventLoop loop;
        QTimer::singleShot(50, &loop, &QEventLoop::quit);
        loop.exec();
        QVERIFY(doomed.isNull());

        // Posted from another thread while this one is blocked in exec(): it wakes up for it.
        QEventLoop waiting;
        counter.quitOnEvent = &waiting;
        std::unique_ptr<QThread> poster(QThread::create([&counter] {
            QThread::msleep(kBlockedMs);
            QCoreApplication::postEvent(&counter, new QEvent(QEvent::User));
        }));
        QTimer::singleShot(kWakeWithinMs * 2, &waiting, &QEventLoop::quit); // should the wake-up be lost
        QElapsedTimer clock;
        clock.start();
        poster->start();
        waiting.exec();
        poster->wait();
        QCOMPARE(counter.events, 6);
        QVERIFY2(clock.elapsed() < kWakeWithinMs, qPrintable(QString::number(clock.elapsed())));
    }

    void wakeUpFromAnotherThreadEndsABlockedWait()
    {
        auto *dispatcher = QAbstractEventDispatcher::instance();
        QCoreApplication::processEvents(); // takes any wake-up an earlier test left
        std::unique_ptr<QThread> waker(QThread::create([dispatcher] {
            QThread::msleep(kBlockedMs);
            dispatcher->wakeUp();
        }));
        QElapsedTimer clock;
        clock.start();
        waker->start();
        // No timer, no socket, no posted event: only the wake-up can end this call.
        dispatcher->processEvents(QEventLoop::WaitForMoreEvents);
        const qint64 waited = clock.elapsed();
        waker->wait();
        QVERIFY2(waited >= kBlockedMs - 50, qPrintable(QString::number(waited))); // it did block
        QVERIFY2(waited < kWakeWithinMs, qPrintable(QString::number(waited)));
    }

    void interruptEndsExecAndSkipsTheWait()
    {
        auto *dispatcher = QAbstractEventDispatcher::instance();
        // From another thread, into a blocked exec(): QEventLoop::exit uses interrupt().
        QEventLoop loop;
        std::unique_ptr<QThread> quitter(QThread::create([&loop] {
            QThread::msleep(kBlockedMs);
            loop.quit();
        }));
        QElapsedTimer clock;
        clock.start();
        quitter->start();
        loop.exec();
        quitter->wait();
        QVERIFY2(clock.elapsed() < kWakeWithinMs, qPrintable(QString::number(clock.elapsed())));

        // interrupt() from a handler of the same iteration (as QEventLoop::exit from within the
        // loop): the call returns without waiting, although nothing else would end the wait.
        QMetaObject::invokeMethod(
            this, [dispatcher] { dispatcher->interrupt(); }, Qt::QueuedConnection);
        QTimer::singleShot(kWakeWithinMs * 2, this, [] {}); // bounds the wait should interrupt be lost
        clock.restart();
        QVERIFY(!dispatcher->processEvents(QEventLoop::WaitForMoreEvents));
        QVERIFY2(clock.elapsed() < kWakeWithinMs, qPrintable(QString::number(clock.elapsed())));
        QCoreApplication::processEvents(); // takes the wake-up interrupt() left
    }

    void excludeSocketNotifiersLeavesReadySocketsAlone()
    {
        SocketPair pair;
        QSocketNotifier notifier(pair.a, QSocketNotifier::Read);
        int activations = 0;
        connect(&notifier, &QSocketNotifier::activated, this, [&] {
            ++activations;
            drain(pair.a);
        });
        QCOMPARE(::write(pair.b, "x", 1), 1);
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 100)
            QCoreApplication::processEvents(QEventLoop::ExcludeSocketNotifiers);
        QCOMPARE(activations, 0);
        // A blocking wait that excludes sockets still ends for a timer, not for the ready socket.
        bool timerFired = false;
        QTimer::singleShot(50, this, [&] { timerFired = true; });
        while (!timerFired && clock.elapsed() < kWakeWithinMs)
            QCoreApplication::processEvents(QEventLoop::ExcludeSocketNotifiers | QEventLoop::WaitForMoreEvents);
        QVERIFY(timerFired);
        QCOMPARE(activations, 0);
        QTRY_COMPARE_WITH_TIMEOUT(activations, 1, kWakeWithinMs);
    }

    void aboutToBlockAndAwakeAreEmitted()
    {
        auto *dispatcher = QAbstractEventDispatcher::instance();
        QSignalSpy blocks(dispatcher, &QAbstractEventDispatcher::aboutToBlock);
        QSignalSpy awakes(dispatcher, &QAbstractEventDispatcher::awake);
        QTimer::singleShot(20, this, [] {});
        dispatcher->processEvents(QEventLoop::WaitForMoreEvents);
        QVERIFY(blocks.count() >= 1);
        QVERIFY(awakes.count() >= 1);
        const int before = int(blocks.count());
        dispatcher->processEvents(QEventLoop::AllEvents); // no wait: no aboutToBlock
        QCOMPARE(int(blocks.count()), before);
    }

    void tcpEchoOverLoopback()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        connect(&server, &QTcpServer::newConnection, this, [&server] {
            while (QTcpSocket *peer = server.nextPendingConnection()) {
                connect(peer, &QTcpSocket::readyRead, peer, [peer] { peer->write(peer->readAll()); });
                connect(peer, &QTcpSocket::disconnected, peer, &QObject::deleteLater);
            }
        });
        QTcpSocket client;
        client.connectToHost(QHostAddress::LocalHost, server.serverPort());
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::ConnectedState, kWakeWithinMs);
        // Larger than a socket buffer, so the write notifier and partial reads take part too.
        QByteArray sent(4 << 20, 'e');
        for (int i = 0; i < sent.size(); i += 997)
            sent[i] = char('a' + i % 26);
        client.write(sent);
        QByteArray received;
        connect(&client, &QTcpSocket::readyRead, this, [&] { received += client.readAll(); });
        QTRY_COMPARE_WITH_TIMEOUT(received.size(), sent.size(), 30'000);
        QCOMPARE(received, sent);
        client.disconnectFromHost();
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::UnconnectedState, kWakeWithinMs);
    }

    // A server answering with write() + flush(), as ConnectionGuard::deliver does: the write
    // notifier goes on and off within one handler, which must not cost the kernel a mask change
    // per answer (it cost two epoll_ctl calls per request before changes were collapsed).
    void writeAndFlushPerAnswerChangesNoMask()
    {
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost));
        connect(&server, &QTcpServer::newConnection, this, [&server] {
            while (QTcpSocket *peer = server.nextPendingConnection()) {
                connect(peer, &QTcpSocket::readyRead, peer, [peer] {
                    peer->write(peer->readAll());
                    peer->flush();
                });
                connect(peer, &QTcpSocket::disconnected, peer, &QObject::deleteLater);
            }
        });
        QTcpSocket client;
        client.connectToHost(QHostAddress::LocalHost, server.serverPort());
        QTRY_COMPARE_WITH_TIMEOUT(client.state(), QAbstractSocket::ConnectedState, kWakeWithinMs);
        int answers = 0;
        connect(&client, &QTcpSocket::readyRead, this, [&] {
            client.readAll();
            ++answers;
            if (answers < 200) {
                client.write("ping");
                client.flush();
            }
        });
        const quint64 before = test::epollDispatcher()->counters().maskChanges;
        client.write("ping");
        client.flush();
        QTRY_COMPARE_WITH_TIMEOUT(answers, 200, 30'000);
        // A few are allowed (an answer the kernel could not take at once keeps its notifier on).
        QVERIFY2(test::epollDispatcher()->counters().maskChanges - before < 20,
                 qPrintable(QStringLiteral("%1 mask changes for 400 writes")
                                .arg(test::epollDispatcher()->counters().maskChanges - before)));
    }
};

TAXICORE_EPOLL_TEST_MAIN(EventLoopSocketsTest)
#include "eventloop_sockets_test.moc"
