// The console shows the admin token (issue 9): ConsoleBackend.adminToken, bound in the server bar,
// is the token the embedded server was given or made (DATA_DIR/admin-token), and that token opens
// /admin/* over real HTTP even with --trust-loopback off, where no token gets 401.
#include "ConsoleBackend.h"

#include "ConsoleKit.h"

#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

namespace {

constexpr int kRequestTimeoutMs = 10'000;

// GET `url` with an optional bearer token; the HTTP status, or 0 when there was no answer.
int statusOf(QNetworkAccessManager &network, const QUrl &url, const QString &token)
{
    QNetworkRequest request(url);
    if (!token.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + token.toLatin1());
    QNetworkReply *reply = network.get(request);
    QSignalSpy finished(reply, &QNetworkReply::finished);
    if (!reply->isFinished() && !finished.wait(kRequestTimeoutMs))
        return 0;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    reply->deleteLater();
    return status;
}

} // namespace

class ConsoleAdminTokenTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void showsTheTokenTheServerAccepts()
    {
        QTemporaryDir settings, data;
        taxicore::test::useSettingsDirectory(settings.path());
        ConsoleBackend backend(taxicore::test::consoleOptions(
            {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"), QStringLiteral("10"),
             QStringLiteral("--data-dir"), data.path(), QStringLiteral("--trust-loopback"), QStringLiteral("off")},
            taxicore::test::StoredSettings::Ignore));
        QVERIFY(backend.adminToken().isEmpty()); // nothing to show before the server runs
        QVERIFY2(backend.start(), qPrintable(backend.errorString()));
        const QString token = backend.adminToken();
        QVERIFY2(token.size() >= 32, qPrintable(token));
        QFile file(data.path() + QStringLiteral("/admin-token"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromLatin1(file.readAll().trimmed()), token);

        QNetworkAccessManager network;
        const QUrl runtime = backend.url().resolved(QUrl(QStringLiteral("/admin/v1/runtime")));
        QCOMPARE(statusOf(network, runtime, token), 200);
        QCOMPARE(statusOf(network, runtime, QString()), 401);
        backend.stop();
    }
};

QTEST_GUILESS_MAIN(ConsoleAdminTokenTest)
#include "console_admin_token_test.moc"
