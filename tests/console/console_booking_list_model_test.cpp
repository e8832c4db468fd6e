// BookingListModel: row-level updates (insert/remove/change, never a reset), filters, roles.
#include "BookingListModel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using taxicore::BookingSnapshot;
using taxicore::BookingState;

namespace {
BookingSnapshot booking(uint64_t id, BookingState state, int carId = 0, const QString &rider = {})
{
    BookingSnapshot b;
    b.id = id;
    b.state = state;
    b.carId = carId ? carId : int(id) + 100;
    b.riderId = rider.isEmpty() ? QStringLiteral("rider-%1").arg(id) : rider;
    b.etaS = uint32_t(id * 10);
    return b;
}

QList<qint64> ids(const BookingListModel &model)
{
    QList<qint64> out;
    for (int row = 0; row < model.rowCount(); ++row)
        out << model.data(model.index(row), BookingListModel::BookingIdRole).toLongLong();
    return out;
}
} // namespace

class BookingListModelTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void newestFirstWithRoles();
    void updatesRowsInPlace();
    void filtersByTextAndOpenState();
    void cancelOfferedOnlyWhereTheServerAcceptsIt();
};

void BookingListModelTest::newestFirstWithRoles()
{
    BookingListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBookings(
        {booking(1, BookingState::Completed), booking(3, BookingState::Assigned), booking(2, BookingState::OnTrip)});
    QCOMPARE(ids(model), (QList<qint64>{3, 2, 1}));

    const QModelIndex first = model.index(0);
    QCOMPARE(model.data(first, BookingListModel::StateRole).toString(), QStringLiteral("assigned"));
    QCOMPARE(model.data(first, BookingListModel::IsOpenRole).toBool(), true);
    QCOMPARE(model.data(first, BookingListModel::RiderRole).toString(), QStringLiteral("rider-3"));
    QCOMPARE(model.data(first, BookingListModel::CarIdRole).toInt(), 103);
    QCOMPARE(model.data(first, BookingListModel::EtaSecondsRole).toInt(), 30);
    QCOMPARE(model.data(model.index(2), BookingListModel::IsOpenRole).toBool(), false);
    QVERIFY(model.roleNames().value(BookingListModel::FareRole) == "fare");
    QCOMPARE(model.rowOf(1), 2);
    QCOMPARE(model.rowOf(99), -1);
}

void BookingListModelTest::updatesRowsInPlace()
{
    BookingListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBookings(
        {booking(1, BookingState::Assigned), booking(2, BookingState::Assigned), booking(3, BookingState::Assigned)});

    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy count(&model, &BookingListModel::countChanged);

    // 4 and 5 arrive, 2 falls out of the recent window, 3 moves on.
    model.setBookings({booking(5, BookingState::Assigned), booking(4, BookingState::Assigned),
                       booking(3, BookingState::Arriving), booking(1, BookingState::Assigned)});
    QCOMPARE(ids(model), (QList<qint64>{5, 4, 3, 1}));
    QCOMPARE(reset.size(), 0);
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.at(0).at(1).toInt(), 1); // row of booking 2
    QCOMPARE(inserted.size(), 1);             // 5 and 4 in one run
    QCOMPARE(inserted.at(0).at(1).toInt(), 0);
    QCOMPARE(inserted.at(0).at(2).toInt(), 1);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 2);
    QCOMPARE(model.data(model.index(2), BookingListModel::StateRole).toString(), QStringLiteral("arriving"));
    QCOMPARE(count.size(), 1);

    // The same data again changes nothing.
    inserted.clear(), removed.clear(), changed.clear();
    model.setBookings({booking(1, BookingState::Assigned), booking(3, BookingState::Arriving),
                       booking(4, BookingState::Assigned), booking(5, BookingState::Assigned)});
    QCOMPARE(inserted.size() + removed.size() + changed.size(), 0);

    model.setBookings({});
    QCOMPARE(model.rowCount(), 0);
}

void BookingListModelTest::filtersByTextAndOpenState()
{
    BookingListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBookings({booking(1, BookingState::Completed, 7, QStringLiteral("alice")),
                       booking(2, BookingState::OnTrip, 8, QStringLiteral("bob")),
                       booking(3, BookingState::Cancelled, 9, QStringLiteral("alicia")),
                       booking(4, BookingState::Assigned, 10, QStringLiteral("carol"))});
    QSignalSpy filterSpy(&model, &BookingListModel::filterChanged);

    model.setOpenOnly(true);
    QCOMPARE(ids(model), (QList<qint64>{4, 2}));
    model.setFilterText(QStringLiteral("ALI"));
    QCOMPARE(ids(model), (QList<qint64>{}));
    model.setOpenOnly(false);
    QCOMPARE(ids(model), (QList<qint64>{3, 1}));
    model.setFilterText(QStringLiteral("#2")); // a booking id
    QCOMPARE(ids(model), (QList<qint64>{2}));
    model.setFilterText(QStringLiteral("10")); // a car id
    QCOMPARE(ids(model), (QList<qint64>{4}));
    model.setFilterText(QStringLiteral("cancel")); // a state
    QCOMPARE(ids(model), (QList<qint64>{3}));
    model.setFilterText({});
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(filterSpy.size(), 7);

    // Without a server there is nothing to cancel.
    QVERIFY(!model.cancel(4));

    // A booking nobody boarded in time is listed as expired, and is no longer open.
    model.setBookings({booking(5, BookingState::Expired, 11, QStringLiteral("dave"))});
    QCOMPARE(model.data(model.index(0), BookingListModel::StateRole).toString(), QStringLiteral("expired"));
    QCOMPARE(model.data(model.index(0), BookingListModel::IsOpenRole).toBool(), false);
    model.setOpenOnly(true);
    QCOMPARE(model.rowCount(), 0);
}

// The × in the list follows the server's state machine: a booking on its trip or closed is answered
// 409 by POST /api/v1/bookings/{id}/cancel, so it is not offered there.
void BookingListModelTest::cancelOfferedOnlyWhereTheServerAcceptsIt()
{
    BookingListModel model;
    model.setBookings({booking(1, BookingState::Assigned), booking(2, BookingState::Arriving),
                       booking(3, BookingState::OnTrip), booking(4, BookingState::Completed),
                       booking(5, BookingState::Cancelled), booking(6, BookingState::Expired)});
    QCOMPARE(model.roleNames().value(BookingListModel::CanCancelRole), QByteArray("canCancel"));
    const auto canCancel = [&model](qint64 id) {
        return model.data(model.index(model.rowOf(id)), BookingListModel::CanCancelRole).toBool();
    };
    QVERIFY(canCancel(1));
    QVERIFY(canCancel(2));
    QVERIFY(!canCancel(3)); // open, but on its trip
    QVERIFY(model.data(model.index(model.rowOf(3)), BookingListModel::IsOpenRole).toBool());
    QVERIFY(!canCancel(4));
    QVERIFY(!canCancel(5));
    QVERIFY(!canCancel(6));
}

QTEST_GUILESS_MAIN(BookingListModelTest)
#include "console_booking_list_model_test.moc"
