// Booking ownership (issue 9): a booking answers with a rider_token, and only that token (or the
// admin token) may read it, pick it up, complete or cancel it: none → 401, another rider's → 403
// (reads in detail, and the live feed: tests/server/server_booking_privacy_test). Only a
// hash is kept, in the shared region (so every worker checks it) and in the ledger (so it holds
// after a restart). Real taxicore-server children over real HTTP.

#include "HardeningKit.h"

#include <QTemporaryDir>

using namespace taxicore::test;
using namespace taxicore::test::hardening;

class BookingOwnershipTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void onlyTheRiderMovesTheBooking()
    {
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("20"), QStringLiteral("--sim-speed"),
                              QStringLiteral("0.001"), QStringLiteral("--admin-token"),
                              QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        const HttpResponse mine = book(server, QStringLiteral("alice"));
        const HttpResponse theirs = book(server, QStringLiteral("bob"), 57.71, 11.96);
        TC_VERIFY_STATUS(mine, 201);
        TC_VERIFY_STATUS(theirs, 201);
        const QByteArray myToken = riderToken(mine.json());
        QVERIFY2(myToken.size() >= 32, mine.body.constData());
        QVERIFY(myToken != riderToken(theirs.json()));
        // Shown once: reading the booking back does not reveal it.
        const HttpResponse read =
            send(server, "GET", "/api/v1/bookings/" + QByteArray::number(bookingId(mine)), myToken);
        TC_VERIFY_STATUS(read, 200);
        QVERIFY2(!read.body.contains(myToken) && !read.json().contains("rider_token"), read.body.constData());

        const qint64 id = bookingId(mine);
        for (const QByteArray action : {"pickup", "complete", "cancel"}) {
            const HttpResponse none = send(server, "POST", movePath(id, action));
            TC_VERIFY_ERROR(none, 401, "rider_token_required");
            QVERIFY(none.header("WWW-Authenticate").startsWith("Bearer"));
            TC_VERIFY_ERROR(send(server, "POST", movePath(id, action), riderToken(theirs.json())), 403,
                            "not_your_booking");
            TC_VERIFY_ERROR(send(server, "POST", movePath(id, action), "made-up-token"), 403, "not_your_booking");
        }
        // The refused moves changed nothing; the owner's own cancel works.
        QCOMPARE(
            send(server, "GET", "/api/v1/bookings/" + QByteArray::number(id), myToken).json().value("state").toString(),
            QStringLiteral("assigned"));
        const HttpResponse cancelled = send(server, "POST", movePath(id, "cancel"), myToken);
        TC_VERIFY_STATUS(cancelled, 200);
        QCOMPARE(cancelled.json().value("state").toString(), QStringLiteral("cancelled"));
        // The operator (admin token) may move anyone's booking.
        TC_VERIFY_STATUS(send(server, "POST", movePath(bookingId(theirs), "cancel"), kAdminToken), 200);
        QCOMPARE(server.stop(), 0);
    }

    void ownershipHoldsInEveryWorker()
    {
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("20"), QStringLiteral("--mode"),
                              QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("2")});
        QVERIFY2(server.start(), qPrintable(server.error()));
        QVERIFY2(waitUntil([&] { return servingWorkers(server, {}) == 2; }, 20'000), server.stderrText().constData());
        const HttpResponse mine = book(server, QStringLiteral("carol"));
        const HttpResponse theirs = book(server, QStringLiteral("dave"), 57.71, 11.96);
        TC_VERIFY_STATUS(mine, 201);
        TC_VERIFY_STATUS(theirs, 201);
        // Each request on its own connection: round-robin hands them to both workers in turn.
        for (int i = 0; i < 4; ++i) {
            TC_VERIFY_ERROR(send(server, "POST", movePath(bookingId(mine), "cancel")), 401, "rider_token_required");
            TC_VERIFY_ERROR(send(server, "POST", movePath(bookingId(mine), "cancel"), riderToken(theirs.json())), 403,
                            "not_your_booking");
        }
        TC_VERIFY_STATUS(send(server, "POST", movePath(bookingId(mine), "cancel"), riderToken(mine.json())), 200);
        TC_VERIFY_STATUS(send(server, "POST", movePath(bookingId(theirs), "cancel"), riderToken(theirs.json())), 200);
        QCOMPARE(server.stop(), 0);
    }

    void ownershipSurvivesARestart()
    {
        QTemporaryDir data;
        const QStringList args{QStringLiteral("--cars"), QStringLiteral("20"),         QStringLiteral("--sim-speed"),
                               QStringLiteral("0.001"),  QStringLiteral("--data-dir"), data.path()};
        HttpResponse mine, theirs;
        {
            ServerProcess server(args);
            QVERIFY2(server.start(), qPrintable(server.error()));
            mine = book(server, QStringLiteral("erin"));
            theirs = book(server, QStringLiteral("frank"), 57.71, 11.96);
            TC_VERIFY_STATUS(mine, 201);
            TC_VERIFY_STATUS(theirs, 201);
            QCOMPARE(server.stop(), 0);
        }
        ServerProcess again(args);
        QVERIFY2(again.start(), qPrintable(again.error()));
        const qint64 id = bookingId(mine);
        QCOMPARE(send(again, "GET", "/api/v1/bookings/" + QByteArray::number(id), riderToken(mine.json()))
                     .json()
                     .value("state")
                     .toString(),
                 QStringLiteral("assigned")); // restored from the ledger
        TC_VERIFY_ERROR(send(again, "POST", movePath(id, "cancel")), 401, "rider_token_required");
        TC_VERIFY_ERROR(send(again, "POST", movePath(id, "cancel"), riderToken(theirs.json())), 403,
                        "not_your_booking");
        TC_VERIFY_STATUS(send(again, "POST", movePath(id, "cancel"), riderToken(mine.json())), 200);
        TC_VERIFY_STATUS(send(again, "POST", movePath(bookingId(theirs), "cancel"), riderToken(theirs.json())), 200);
        QCOMPARE(again.stop(), 0);
    }
};

QTEST_GUILESS_MAIN(BookingOwnershipTest)
#include "hardening_booking_ownership_test.moc"
