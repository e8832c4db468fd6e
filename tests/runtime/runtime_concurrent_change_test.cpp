// Runtime changes one at a time (issue 15 item 5): two PUT /admin/v1/runtime sent at the same
// instant never both get 200 with one of them describing the other's settings. Each 200 answers
// exactly the settings its own request applied; a request that arrives while another is being
// applied gets 409 switch_in_progress; what is in force afterwards is what one of the 200s said.

#include "RuntimeKit.h"

#include <QTest>
#include <algorithm>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kRounds = 25;
constexpr int kStartMs = 20'000;
constexpr int kAnswerMs = 10'000;

QByteArray putRequest(const QJsonObject &body)
{
    return formatRequest("PUT", "/admin/v1/runtime", QJsonDocument(body).toJson(QJsonDocument::Compact));
}

bool sameSettings(const QJsonObject &answer, const QJsonObject &wanted)
{
    for (auto it = wanted.begin(); it != wanted.end(); ++it)
        if (answer.value(it.key()) != it.value())
            return false;
    return true;
}
} // namespace

class ConcurrentRuntimeChangeTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void eachAnswerIsItsOwnChange_data();
    void eachAnswerIsItsOwnChange();
};

void ConcurrentRuntimeChangeTest::eachAnswerIsItsOwnChange_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("pool") << QStringLiteral("pool");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void ConcurrentRuntimeChangeTest::eachAnswerIsItsOwnChange()
{
    QFETCH(QString, mode);
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--cars"),
                          QStringLiteral("10")});
    QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
    if (mode == QStringLiteral("processes"))
        QVERIFY2(waitUntil([&] { return serving(server).size() == 2; }, kStartMs), "workers did not start");

    int conflicts = 0;
    for (int round = 0; round < kRounds; ++round) {
        // Two changes that differ only in what they ask for; both valid on their own.
        const QJsonObject wanted[2] = {
            {{"mode", mode}, {"workers", 2}, {"threads", 3 + 2 * round}},
            {{"mode", mode}, {"workers", 2}, {"threads", 4 + 2 * round}},
        };
        HttpClient a(server.host(), server.port(), kAnswerMs);
        HttpClient b(server.host(), server.port(), kAnswerMs);
        QVERIFY(a.connectToServer());
        QVERIFY(b.connectToServer());
        // Both connections reached their server (a worker, in processes mode), so the two changes
        // race there: open connections are these two and the /metrics request that counts them.
        QVERIFY2(waitUntil([&] { return metric(server, QStringLiteral("taxicore_open_connections")) >= 3; }, 5000, 5),
                 "the two connections did not reach the server");
        QVERIFY(a.sendRaw(putRequest(wanted[0])));
        QVERIFY(b.sendRaw(putRequest(wanted[1])));
        const HttpResponse answers[2] = {a.readResponses(1).value(0), b.readResponses(1).value(0)};

        QList<QJsonObject> applied;
        for (int i = 0; i < 2; ++i) {
            const HttpResponse &r = answers[i];
            QVERIFY2(r.complete, qPrintable(QStringLiteral("round %1: %2").arg(round).arg(r.error)));
            if (r.status == 409) {
                TC_VERIFY_ERROR(r, 409, "switch_in_progress");
                ++conflicts;
                continue;
            }
            TC_VERIFY_STATUS(r, 200);
            QVERIFY2(sameSettings(r.json(), wanted[i]),
                     qPrintable(QStringLiteral("round %1: asked %2, answered %3")
                                    .arg(round)
                                    .arg(QString::fromUtf8(QJsonDocument(wanted[i]).toJson(QJsonDocument::Compact)),
                                         QString::fromUtf8(r.body))));
            applied.append(r.json());
        }
        QVERIFY2(!applied.isEmpty(), qPrintable(QStringLiteral("round %1: neither change was applied").arg(round)));
        const QJsonObject now = getJson(server, "/admin/v1/runtime");
        const bool isOneOfThem =
            std::any_of(applied.begin(), applied.end(), [&](const QJsonObject &o) { return sameSettings(now, o); });
        QVERIFY2(isOneOfThem,
                 qPrintable(QStringLiteral("round %1: in force %2")
                                .arg(round)
                                .arg(QString::fromUtf8(QJsonDocument(now).toJson(QJsonDocument::Compact)))));
    }
    // Sent within microseconds of each other while a change takes a poll of the controller
    // (20 ms): most rounds overlap. None overlapping would mean the test did not test anything.
    QVERIFY2(conflicts > 0, "no two changes overlapped in any round");
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(ConcurrentRuntimeChangeTest)
#include "runtime_concurrent_change_test.moc"
