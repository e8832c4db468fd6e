// The worker protocol (server/region/WorkerProtocol.h) as its users see it: the slot-state names
// /admin/v1/workers and the console show, every message type through a real channel (with and
// without a descriptor), and the defaults of the flags and settings that come from the header.
#include "region/WorkerProtocol.h"
#include "runtime/ServerOptions.h"
#include "runtime/WorkerChannel.h"
#include "runtime/WorkerSupervisor.h"

#include <QCommandLineParser>
#include <QSet>
#include <QTest>
#include <fcntl.h>
#include <iterator>
#include <sys/socket.h>
#include <unistd.h>

using namespace taxicore;

class WorkerProtocolTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void slotStatesHaveTheirApiNames();
    void channelCarriesEveryMessageType();
    void channelPassesAWorkingDescriptor();
    void channelSkipsADatagramOfAnotherSize();
    void flagAndSupervisorDefaultsComeFromTheProtocol();
};

void WorkerProtocolTest::slotStatesHaveTheirApiNames()
{
    // The names are part of the HTTP API (GET /admin/v1/workers "state") and of the console.
    const char *const expected[] = {"unused", "starting", "serving", "draining", "exited"};
    QCOMPARE(std::size(expected), size_t(kWorkerSlotStateCount));
    QSet<QByteArray> seen;
    for (uint32_t raw = 0; raw < kWorkerSlotStateCount; ++raw) {
        const QByteArray name = workerSlotStateName(WorkerSlotState(raw));
        QCOMPARE(name, QByteArray(expected[raw]));
        seen.insert(name);
    }
    QCOMPARE(seen.size(), qsizetype(kWorkerSlotStateCount));
    // A value no version writes (a newer binary's state, a torn region) is shown as gone.
    QCOMPARE(QByteArray(workerSlotStateName(WorkerSlotState(kWorkerSlotStateCount))), QByteArray("exited"));
    QVERIFY(!isLiveWorkerSlotState(WorkerSlotState::Unused));
    QVERIFY(isLiveWorkerSlotState(WorkerSlotState::Starting));
    QVERIFY(isLiveWorkerSlotState(WorkerSlotState::Serving));
    QVERIFY(isLiveWorkerSlotState(WorkerSlotState::Draining));
    QVERIFY(!isLiveWorkerSlotState(WorkerSlotState::Exited));
}

void WorkerProtocolTest::channelCarriesEveryMessageType()
{
    int fds[2];
    QVERIFY(WorkerChannel::createPair(fds));
    const WorkerChannel primary(fds[0]);
    const WorkerChannel worker(fds[1]);
    const WorkerMessageType types[] = {WorkerMessageType::Connection, WorkerMessageType::Declined,
                                       WorkerMessageType::Listen,     WorkerMessageType::StopListening,
                                       WorkerMessageType::Drain,      WorkerMessageType::Adopted};
    uint32_t id = 1000;
    for (const WorkerMessageType type : types) {
        QVERIFY(primary.send(type, -1, ++id));
        const auto message = worker.receive();
        QVERIFY(message);
        QCOMPARE(uint32_t(message->type), uint32_t(type));
        QCOMPARE(message->id, id);
        QCOMPARE(message->fd, -1);
    }
    QVERIFY(!worker.receive()); // non-blocking: nothing more is waiting
    ::close(fds[0]);
    ::close(fds[1]);
}

void WorkerProtocolTest::channelPassesAWorkingDescriptor()
{
    int fds[2];
    QVERIFY(WorkerChannel::createPair(fds));
    int pipeFds[2];
    QCOMPARE(::pipe(pipeFds), 0);
    QVERIFY(WorkerChannel(fds[0]).send(WorkerMessageType::Connection, pipeFds[1], 7));
    ::close(pipeFds[1]); // the receiver's duplicate keeps the pipe's write end open

    const auto message = WorkerChannel(fds[1]).receive();
    QVERIFY(message);
    QCOMPARE(message->type, WorkerMessageType::Connection);
    QCOMPARE(message->id, 7u);
    QVERIFY(message->fd >= 0);
    // Received close-on-exec: a worker's own children do not inherit clients' sockets.
    QVERIFY(::fcntl(message->fd, F_GETFD) & FD_CLOEXEC);
    QCOMPARE(::write(message->fd, "x", 1), ssize_t(1));
    char byte = 0;
    QCOMPARE(::read(pipeFds[0], &byte, 1), ssize_t(1));
    QCOMPARE(byte, 'x');
    ::close(message->fd);
    ::close(pipeFds[0]);
    ::close(fds[0]);
    ::close(fds[1]);
}

void WorkerProtocolTest::channelSkipsADatagramOfAnotherSize()
{
    int fds[2];
    QVERIFY(WorkerChannel::createPair(fds));
    const uint32_t shortDatagram = uint32_t(WorkerMessageType::Drain);
    QCOMPARE(::send(fds[0], &shortDatagram, sizeof shortDatagram, 0), ssize_t(sizeof shortDatagram));
    QVERIFY(WorkerChannel(fds[0]).send(WorkerMessageType::Drain, -1, 3));
    const WorkerChannel worker(fds[1]);
    QVERIFY(!worker.receive()); // not a message: consumed and ignored
    const auto message = worker.receive();
    QVERIFY(message);
    QCOMPARE(message->type, WorkerMessageType::Drain);
    QCOMPARE(message->id, 3u);
    ::close(fds[0]);
    ::close(fds[1]);
}

void WorkerProtocolTest::flagAndSupervisorDefaultsComeFromTheProtocol()
{
    QCommandLineParser parser;
    addServerOptions(parser);
    QVERIFY(parser.parse({QStringLiteral("taxicore-server")}));
    ServerOptions options;
    options.heartbeatTimeoutMs = -1; // so the value read is the flag's default, not the struct's
    QString error;
    QVERIFY2(readServerOptions(parser, options, error), qPrintable(error));
    QCOMPARE(options.heartbeatTimeoutMs, kWorkerHeartbeatTimeoutMs);
    QCOMPARE(ServerOptions{}.heartbeatTimeoutMs, kWorkerHeartbeatTimeoutMs);
    QVERIFY2(parser.helpText().contains(QStringLiteral("(default %1)").arg(kWorkerHeartbeatTimeoutMs)),
             "--help states the default the server uses");

    const WorkerSupervisor::Settings settings;
    QCOMPARE(settings.heartbeatTimeoutMs, kWorkerHeartbeatTimeoutMs);
    QCOMPARE(settings.drainTimeoutMs, kWorkerDrainTimeoutMs);
}

QTEST_GUILESS_MAIN(WorkerProtocolTest)
#include "runtime_worker_protocol_test.moc"
