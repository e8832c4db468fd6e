// Strings riders send are shown as they are, never as rich text (review finding: a booking whose
// rider_id was `<img src="http://…">` made the console fetch that URL within seconds, its Label
// rendering the rider as StyledText). The console's QML (Main.qml) in a real window (Xvfb) over
// its embedded server: a booking over HTTP in the Bookings panel and a completed trip in the
// Reports panel's trip list, each with such a rider id pointing at a local listener. Neither may
// make a connection to it, and the Labels showing them are plain text (the literal `<img`).
#include "ConsoleBackend.h"
#include "ledger/Ledger.h"

#include "ConsoleKit.h"

#include <QApplication>
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

Q_IMPORT_QML_PLUGIN(TaxiCorePlugin)
Q_IMPORT_QML_PLUGIN(TaxiCoreConsolePlugin)

using namespace taxicore::test;

namespace {
constexpr int kRequestTimeoutMs = 5000;
constexpr int kShownWithinMs = 15000;
// The reviewer saw the fetch within seconds of the booking showing.
constexpr int kNoFetchForMs = 4000;
constexpr int kPlainText = 0; // Text.PlainText

// Every item under `item` whose `text` property contains `needle`.
void itemsWithText(QQuickItem *item, const QString &needle, QList<QQuickItem *> &found)
{
    const QVariant text = item->property("text");
    if (text.isValid() && text.toString().contains(needle))
        found.append(item);
    for (QQuickItem *child : item->childItems())
        itemsWithText(child, needle, found);
}
} // namespace

class ConsolePlainTextTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aBookingsRiderIdFetchesNothing();
    void aTripsRiderIdFetchesNothing();

private:
    QString riderPointingAt(const QString &file) const
    {
        return QStringLiteral("<img src=\"http://127.0.0.1:%1/%2\">").arg(m_listener.serverPort()).arg(file);
    }
    // Waits until a visible item shows `rider`; then no request for `file` (nor any connection at
    // all) may come for a while, and every item showing it must be plain text.
    void expectShownAsPlainText(const QString &rider, const QString &file);

    QTcpServer m_listener; // where the rider ids point: counts who connects
    int m_connections = 0;
    QStringList m_requests;
    std::unique_ptr<QTemporaryDir> m_settingsDir;
    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<ConsoleBackend> m_backend;
    std::unique_ptr<QQmlApplicationEngine> m_engine;
    QQuickWindow *m_window = nullptr;
    QNetworkAccessManager m_network;
};

void ConsolePlainTextTest::initTestCase()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    QVERIFY(m_listener.listen(QHostAddress::LocalHost, 0));
    connect(&m_listener, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_listener.nextPendingConnection()) {
            ++m_connections;
            // The request line names the file asked for ("GET /pwn.png HTTP/1.1").
            connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                if (!socket->canReadLine())
                    return;
                m_requests.append(QString::fromLatin1(socket->readLine()).trimmed());
                socket->disconnectFromHost();
            });
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        }
    });
    m_settingsDir = std::make_unique<QTemporaryDir>();
    m_dataDir = std::make_unique<QTemporaryDir>();
    useSettingsDirectory(m_settingsDir->path());
    QSettings().clear();

    // A trip of today, in the ledger before the server opens it (the server then owns the file).
    {
        taxicore::LedgerOptions options;
        options.dataDir = m_dataDir->path();
        auto opened = taxicore::Ledger::open(options);
        QVERIFY2(opened.ledger, qPrintable(opened.error));
        const qint64 ended = QDateTime::currentMSecsSinceEpoch() - 60'000;
        taxicore::BookingRecord booking;
        booking.bookingId = 1;
        booking.carId = 1;
        booking.riderId = riderPointingAt(QStringLiteral("trip.png"));
        booking.createdMs = booking.atMs = ended - 700'000;
        taxicore::TripRecord trip;
        trip.bookingId = 1;
        trip.carId = 1;
        trip.riderId = booking.riderId;
        trip.startedMs = ended - 600'000;
        trip.endedMs = ended;
        trip.distanceM = 2500;
        trip.durationS = 600;
        trip.fare.total = 120;
        trip.fare.currency = QStringLiteral("SEK");
        QVERIFY(opened.ledger->appendAndWait(booking));
        QVERIFY(opened.ledger->appendAndWait(trip));
    }

    const auto options = consoleOptions({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--host"),
                                         QStringLiteral("127.0.0.1"), QStringLiteral("--cars"), QStringLiteral("50"),
                                         QStringLiteral("--data-dir"), m_dataDir->path()},
                                        StoredSettings::Ignore);
    m_backend = std::make_unique<ConsoleBackend>(options);
    QVERIFY2(m_backend->start(), qPrintable(m_backend->errorString()));
    ConsoleBackend::setInstance(m_backend.get());

    m_engine = std::make_unique<QQmlApplicationEngine>();
    m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/TaxiCore/Main.qml")));
    QVERIFY(!m_engine->rootObjects().isEmpty());
    m_window = qobject_cast<QQuickWindow *>(m_engine->rootObjects().first());
    QVERIFY(m_window);
    m_window->resize(1280, 800);
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
}

void ConsolePlainTextTest::cleanupTestCase()
{
    m_engine.reset();
    if (m_backend)
        m_backend->stop();
    ConsoleBackend::setInstance(nullptr);
    m_backend.reset();
}

void ConsolePlainTextTest::expectShownAsPlainText(const QString &rider, const QString &file)
{
    QList<QQuickItem *> shown;
    const auto findVisible = [&] {
        shown.clear();
        itemsWithText(m_window->contentItem(), rider, shown);
        shown.removeIf([](QQuickItem *item) { return !item->isVisible(); });
        return !shown.isEmpty();
    };
    QTRY_VERIFY_WITH_TIMEOUT(findVisible(), kShownWithinMs);
    QTest::qWait(kNoFetchForMs);
    const QString requests = m_requests.join(QStringLiteral("; "));
    QVERIFY2(!requests.contains(QLatin1Char('/') + file), qPrintable(requests));
    QVERIFY2(m_connections == 0, qPrintable(QStringLiteral("%1 connections: %2").arg(m_connections).arg(requests)));
    QVERIFY(findVisible());
    for (QQuickItem *item : std::as_const(shown)) {
        QVERIFY2(item->property("text").toString().contains(QStringLiteral("<img")), item->metaObject()->className());
        const QVariant format = item->property("textFormat");
        QVERIFY2(format.isValid(), item->metaObject()->className());
        QCOMPARE(format.toInt(), kPlainText);
    }
}

void ConsolePlainTextTest::aBookingsRiderIdFetchesNothing()
{
    QVERIFY(m_window->setProperty("panel", QStringLiteral("bookings")));
    const QString rider = riderPointingAt(QStringLiteral("pwn.png"));
    QNetworkRequest request(m_backend->url().resolved(QUrl(QStringLiteral("/api/v1/bookings"))));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    const QJsonObject body{
        {QStringLiteral("rider_id"), rider},
        {QStringLiteral("pickup"), QJsonObject{{QStringLiteral("lat"), 57.7065}, {QStringLiteral("lng"), 11.9670}}}};
    QNetworkReply *reply = m_network.post(request, QJsonDocument(body).toJson());
    QSignalSpy finished(reply, &QNetworkReply::finished);
    QVERIFY(finished.wait(kRequestTimeoutMs));
    QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 201);
    reply->deleteLater();
    expectShownAsPlainText(rider, QStringLiteral("pwn.png"));
}

void ConsolePlainTextTest::aTripsRiderIdFetchesNothing()
{
    QVERIFY(m_window->setProperty("panel", QStringLiteral("reports")));
    // The Reports panel is made at start, hidden: a fetch of its trip's rider may come before.
    expectShownAsPlainText(riderPointingAt(QStringLiteral("trip.png")), QStringLiteral("trip.png"));
}

int main(int argc, char **argv)
{
    // QApplication: the Server panel's charts draw through QGraphicsScene, as in the console.
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("TaxiCoreTest"));
    ConsolePlainTextTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "console_plain_text_test.moc"
