// Operator access (issue 9): /admin/* (and the trips list, which names every rider) is answered to
// trusted loopback clients without a token or
// to anyone with the admin token; a wrong token is 401 even from loopback; --trust-loopback off
// makes loopback clients need the token too. The token is made at first start in the data
// directory (mode 0600) and kept across restarts; --admin-token overrides it. A token file the
// operator wrote is held to --admin-token's rule and never replaced: a bad one stops the start.
// Riders (with their rider token) can never switch modes or kill workers. Real taxicore-server children.

#include "HardeningKit.h"

#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <sys/stat.h>

using namespace taxicore::test;
using namespace taxicore::test::hardening;

namespace {

QByteArray readTokenFile(const QString &dataDir)
{
    QFile file(dataDir + QStringLiteral("/admin-token"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed() : QByteArray();
}

// 401 naming the problem, with a Bearer challenge.
#define TC_VERIFY_UNAUTHORIZED(response, code)                                                                         \
    do {                                                                                                               \
        const HttpResponse &tcU_ = (response);                                                                         \
        TC_VERIFY_ERROR(tcU_, 401, code);                                                                              \
        QVERIFY2(tcU_.header("WWW-Authenticate").startsWith("Bearer"), tcU_.describe().constData());                   \
    } while (false)

} // namespace

class OperatorAccessTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A malformed token from the environment is refused under the name the operator set, not the
    // flag's (which they never typed).
    void aBadTokenFromTheEnvironmentIsNamedSo_data()
    {
        QTest::addColumn<QByteArray>("variable");
        QTest::addColumn<QByteArray>("flag");
        QTest::newRow("admin") << QByteArray("TAXICORE_ADMIN_TOKEN") << QByteArray("--admin-token");
        QTest::newRow("device") << QByteArray("TAXICORE_DEVICE_TOKEN") << QByteArray("--device-token");
    }
    void aBadTokenFromTheEnvironmentIsNamedSo()
    {
        QFETCH(QByteArray, variable);
        QFETCH(QByteArray, flag);
        QTemporaryDir data;
        qputenv(variable.constData(), "short");
        const auto unset = qScopeGuard([variable] { qunsetenv(variable.constData()); });
        const ServerProcess::RunResult result = ServerProcess::run(
            {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"), data.path()});
        QVERIFY2(result.finished, "the server did not exit by itself");
        QCOMPARE(result.exitCode, 2);
        QVERIFY2(result.err.contains(variable + " must be"), result.err.constData());
        QVERIFY2(!result.err.contains(flag + " must be"), result.err.constData());
    }

    void loopbackIsTrustedButAWrongTokenIsNot()
    {
        QTemporaryDir data;
        ServerProcess server(
            {QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--data-dir"), data.path()});
        QVERIFY2(server.start(), qPrintable(server.error()));
        TC_VERIFY_STATUS(send(server, "GET", "/admin/v1/runtime"), 200);
        TC_VERIFY_UNAUTHORIZED(send(server, "GET", "/admin/v1/runtime", "not-the-admin-token"), "invalid_admin_token");
        const QByteArray token = readTokenFile(data.path());
        QVERIFY(!token.isEmpty());
        TC_VERIFY_STATUS(send(server, "GET", "/admin/v1/runtime", token), 200);
        QCOMPARE(server.stop(), 0);
    }

    // A web page in a browser on the server's own machine is a loopback client too. Someone
    // else's page must not get the operator endpoints through it: neither by a form or fetch
    // (Origin: their site) nor by DNS rebinding (Host: their name, resolving to 127.0.0.1). Both
    // ways to read a request are covered: the direct path, and Qt's parser ('%' in the path).
    void aPageFromAnotherSiteGetsNoLoopbackTrust()
    {
        QTemporaryDir data;
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--data-dir"), data.path(),
                              QStringLiteral("--admin-token"), QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        const QByteArray port = QByteArray::number(server.port());
        const QByteArray self = "127.0.0.1:" + port;
        HttpClient http(server.host(), server.port());
        for (const QByteArray &path :
             {QByteArrayLiteral("/admin/v1/runtime"), QByteArrayLiteral("/admin/v1/%72untime")}) {
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Host", "evil.example:" + port}}), 403,
                            "cross_site_request");
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Origin", "http://evil.example"}}), 403,
                            "cross_site_request");
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Host", self}, {"Origin", "http://localhost:1"}}), 403,
                            "cross_site_request"); // another server on this machine is another site
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Host", self}, {"Origin", "null"}}), 403,
                            "cross_site_request");
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Host", self}, {"Origin", "https://" + self}}), 403,
                            "cross_site_request");
            // Not a host at all: userinfo, two names joined as Qt joins repeated fields. Refused by
            // the framing check before any trust is weighed (400 invalid_host, RFC 9112 §3.2).
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Host", "localhost:1@evil.example"}}), 400, "invalid_host");
            TC_VERIFY_ERROR(http.request("GET", path, {}, {{"Host", "localhost:" + port + ", evil.example"}}), 400,
                            "invalid_host");
            // The server's own pages, and tools that name the machine: trusted as before.
            TC_VERIFY_STATUS(http.request("GET", path, {}, {{"Host", self}, {"Origin", "http://" + self}}), 200);
            TC_VERIFY_STATUS(http.request("GET", path, {}, {{"Host", "localhost:" + port}}), 200);
            TC_VERIFY_STATUS(http.request("GET", path, {}, {{"Host", "LocalHost.:" + port}}), 200);
            TC_VERIFY_STATUS(http.request("GET", path, {}, {{"Host", "[::1]:" + port}}), 200);
            TC_VERIFY_STATUS(http.request("GET", path), 200);
            // A token holder may use any page.
            Headers withToken = bearer(kAdminToken);
            withToken.append(qMakePair(QByteArray("Origin"), QByteArray("http://evil.example")));
            TC_VERIFY_STATUS(http.request("GET", path, {}, withToken), 200);
        }
        // A cross-site form's write is refused before it is done, and not rate-limit exempt.
        TC_VERIFY_ERROR(http.request("POST", "/admin/v1/events", R"({"kind":"csrf-probe","detail":{}})",
                                     {{"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}}),
                        403, "cross_site_request");
        const HttpResponse events = http.get("/admin/v1/events");
        TC_VERIFY_STATUS(events, 200);
        QVERIFY2(!events.body.contains("csrf-probe"), events.body.constData());
        TC_VERIFY_ERROR(http.request("PUT", "/api/v1/cars/1/position", R"({"lat":57.7,"lng":11.97})",
                                     {{"Host", "evil.example:" + port}}),
                        403, "cross_site_request");
        QCOMPARE(server.stop(), 0);
    }

    void tokenFileIsPrivateAndKeptAcrossRestarts()
    {
        QTemporaryDir data;
        const QStringList args{QStringLiteral("--cars"),           QStringLiteral("10"),
                               QStringLiteral("--data-dir"),       data.path(),
                               QStringLiteral("--trust-loopback"), QStringLiteral("off")};
        QByteArray first;
        {
            ServerProcess server(args);
            QVERIFY2(server.start(), qPrintable(server.error()));
            first = readTokenFile(data.path());
            QVERIFY2(first.size() >= 32, first.constData()); // at least 128 bits, hex
            QVERIFY2(QByteArray::fromHex(first).toHex() == first, first.constData());
            struct stat info {};
            QCOMPARE(::stat(qPrintable(data.path() + QStringLiteral("/admin-token")), &info), 0);
            QCOMPARE(info.st_mode & 0777, mode_t(0600));
            TC_VERIFY_STATUS(send(server, "GET", "/admin/v1/workers", first), 200);
            QCOMPARE(server.stop(), 0);
        }
        ServerProcess again(args);
        QVERIFY2(again.start(), qPrintable(again.error()));
        QCOMPARE(readTokenFile(data.path()), first);
        TC_VERIFY_STATUS(send(again, "GET", "/admin/v1/workers", first), 200);
        QCOMPARE(again.stop(), 0);
    }

    void operatorsTokenFileIsCheckedNeverReplaced_data()
    {
        QTest::addColumn<QString>("fileName");
        QTest::addColumn<QByteArray>("content");
        for (const QString &name : {QStringLiteral("admin-token"), QStringLiteral("device-token")}) {
            const QByteArray tag = name.toLatin1() + ": ";
            QTest::newRow(tag + "too short") << name << QByteArray("short-token\n");
            QTest::newRow(tag + "empty") << name << QByteArray();
            QTest::newRow(tag + "spaces") << name << QByteArray("has spaces in it, so no good\n");
            QTest::newRow(tag + "quotes") << name << QByteArray("\"quoted-token-0123456789\"\n");
            QTest::newRow(tag + "non-ASCII") << name << QByteArray("t\xc3\xb6ken-with-an-umlaut-0123\n");
            QTest::newRow(tag + "too long") << name << QByteArray(129, 'a');
        }
    }

    // The rule of --admin-token and --device-token holds for the files too; the operator's file is
    // left as it is, and the message names it and the rule.
    void operatorsTokenFileIsCheckedNeverReplaced()
    {
        QFETCH(QString, fileName);
        QFETCH(QByteArray, content);
        QTemporaryDir data;
        QFile file(data.filePath(fileName));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(content);
        file.close();
        const ServerProcess::RunResult r =
            ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"),
                                QStringLiteral("10"), QStringLiteral("--data-dir"), data.path()},
                               10'000);
        QVERIFY2(r.finished, "the server started on a bad token file: " + r.out);
        QVERIFY2(r.exitCode == 1, QByteArray::number(r.exitCode) + ": " + r.err);
        QVERIFY2(!r.out.contains("listening on"), r.out.constData());
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(data.filePath(fileName)), qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("16 to 128 characters of A-Z a-z 0-9 . _ ~ + / = -")), qPrintable(err));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), content);
    }

    void operatorsTokenFileWithANewlineIsUsed()
    {
        QTemporaryDir data;
        QFile file(data.filePath(QStringLiteral("admin-token")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("operator-chosen-admin-token\r\n");
        file.close();
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--data-dir"), data.path(),
                              QStringLiteral("--trust-loopback"), QStringLiteral("off")});
        QVERIFY2(server.start(), qPrintable(server.error()));
        TC_VERIFY_STATUS(send(server, "GET", "/admin/v1/runtime", "operator-chosen-admin-token"), 200);
        QCOMPARE(readTokenFile(data.path()), QByteArray("operator-chosen-admin-token"));
        QCOMPARE(server.stop(), 0);
    }

    void adminTokenFlagOverridesTheFile()
    {
        QTemporaryDir data;
        QFile file(data.path() + QStringLiteral("/admin-token"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("token-from-the-file-0123456789\n");
        file.close();
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--data-dir"), data.path(),
                              QStringLiteral("--trust-loopback"), QStringLiteral("off"),
                              QStringLiteral("--admin-token"), QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        TC_VERIFY_STATUS(send(server, "GET", "/admin/v1/runtime", kAdminToken), 200);
        TC_VERIFY_UNAUTHORIZED(send(server, "GET", "/admin/v1/runtime", "token-from-the-file-0123456789"),
                               "invalid_admin_token");
        QCOMPARE(readTokenFile(data.path()), QByteArray("token-from-the-file-0123456789")); // left alone
        QCOMPARE(server.stop(), 0);
    }

    void untrustedLoopbackNeedsTheToken()
    {
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--trust-loopback"),
                              QStringLiteral("off"), QStringLiteral("--admin-token"),
                              QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        for (const QByteArray path :
             {"/admin/v1/runtime", "/admin/v1/workers", "/admin/v1/events", "/admin/v1/report", "/api/v1/trips"}) {
            TC_VERIFY_UNAUTHORIZED(send(server, "GET", path), "admin_token_required");
            TC_VERIFY_UNAUTHORIZED(send(server, "GET", path, kAdminToken + "x"), "invalid_admin_token");
            TC_VERIFY_STATUS(send(server, "GET", path, kAdminToken), 200);
        }
        // Lower-case scheme is the same scheme (RFC 7235).
        HttpClient http(server.host(), server.port());
        TC_VERIFY_STATUS(http.request("GET", "/admin/v1/runtime", {}, {{"authorization", "bearer " + kAdminToken}}),
                         200);
        // The public API stays public.
        TC_VERIFY_STATUS(send(server, "GET", "/healthz"), 200);
        QCOMPARE(server.stop(), 0);
    }

    void ridersCannotSwitchModesOrKillWorkers()
    {
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("20"), QStringLiteral("--mode"),
                              QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("2"),
                              QStringLiteral("--trust-loopback"), QStringLiteral("off"),
                              QStringLiteral("--admin-token"), QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        QVERIFY2(waitUntil([&] { return servingWorkers(server, kAdminToken) == 2; }, 20'000),
                 server.stderrText().constData());
        const HttpResponse booked = book(server, QStringLiteral("rider-with-a-token"));
        TC_VERIFY_STATUS(booked, 201);
        const QByteArray rider = riderToken(booked.json());
        QVERIFY(!rider.isEmpty());
        const HttpResponse before = send(server, "GET", "/admin/v1/workers", kAdminToken);
        TC_VERIFY_STATUS(before, 200);

        for (const QByteArray &token : {rider, QByteArray()}) {
            TC_VERIFY_UNAUTHORIZED(send(server, "PUT", "/admin/v1/runtime", token, R"({"mode":"single"})"),
                                   token.isEmpty() ? "admin_token_required" : "invalid_admin_token");
            for (const QByteArray index : {"0", "1"})
                TC_VERIFY_UNAUTHORIZED(send(server, "POST", "/admin/v1/workers/" + index + "/kill", token),
                                       token.isEmpty() ? "admin_token_required" : "invalid_admin_token");
        }
        // Nothing changed: same mode, same worker processes, none restarted.
        const HttpResponse runtime = send(server, "GET", "/admin/v1/runtime", kAdminToken);
        TC_VERIFY_STATUS(runtime, 200);
        QCOMPARE(runtime.json().value("mode").toString(), QStringLiteral("processes"));
        const HttpResponse after = send(server, "GET", "/admin/v1/workers", kAdminToken);
        TC_VERIFY_STATUS(after, 200);
        const auto pids = [](const HttpResponse &r) {
            QList<qint64> out;
            for (const QJsonValue &v : r.json().value("workers").toArray())
                out.append(qint64(v.toObject().value("pid").toDouble()));
            return out;
        };
        QCOMPARE(pids(after), pids(before));
        QCOMPARE(server.stop(), 0);
    }

    void badAccessFlagsAreRefused()
    {
        const auto refused = [](const QStringList &args, const QString &names) {
            const ServerProcess::RunResult r = ServerProcess::run(args);
            return r.finished && r.exitCode != 0 && QString::fromUtf8(r.err).contains(names);
        };
        QVERIFY(
            refused({QStringLiteral("--trust-loopback"), QStringLiteral("maybe")}, QStringLiteral("--trust-loopback")));
        QVERIFY(refused({QStringLiteral("--admin-token"), QStringLiteral("short")}, QStringLiteral("--admin-token")));
        QVERIFY(refused({QStringLiteral("--admin-token"), QStringLiteral("has spaces in it, so no good")},
                        QStringLiteral("--admin-token")));
        QVERIFY(refused({QStringLiteral("--booking-rate"), QStringLiteral("0")}, QStringLiteral("--booking-rate")));
        QVERIFY(refused({QStringLiteral("--booking-burst"), QStringLiteral("0")}, QStringLiteral("--booking-burst")));
    }
};

QTEST_GUILESS_MAIN(OperatorAccessTest)
#include "hardening_operator_access_test.moc"
