#include "BookingListModel.h"

#include "ConsoleBackend.h"

#include "fleet/FleetStore.h"

#include <algorithm>
#include <unordered_set>

namespace {
bool sameRow(const taxicore::BookingSnapshot &a, const taxicore::BookingSnapshot &b)
{
    return a.state == b.state && a.carId == b.carId && a.etaS == b.etaS && a.fare == b.fare && a.riderId == b.riderId;
}
} // namespace

BookingListModel::BookingListModel(QObject *parent)
    : QAbstractListModel(parent)
{
    m_pollTimer.setInterval(kPollIntervalMs);
    connect(&m_pollTimer, &QTimer::timeout, this, &BookingListModel::refresh);
}

BookingListModel::~BookingListModel() = default;

int BookingListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant BookingListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto &b = m_rows[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return QStringLiteral("#%1 %2").arg(b.id).arg(taxicore::bookingStateName(b.state));
    case BookingIdRole:
        return qint64(b.id);
    case StateRole:
        return QString(taxicore::bookingStateName(b.state));
    case IsOpenRole:
        return taxicore::isOpen(b.state);
    case RiderRole:
        return b.riderId;
    case CarIdRole:
        return b.carId;
    case EtaSecondsRole:
        return b.etaS;
    case FareRole:
        return b.fare;
    case CreatedMsRole:
        return qint64(b.createdMs);
    case CanCancelRole: // the server's own rule: offering what it would answer 409 to misleads
        return taxicore::canTransition(b.state, taxicore::BookingState::Cancelled);
    }
    return {};
}

QHash<int, QByteArray> BookingListModel::roleNames() const
{
    return {
        {Qt::DisplayRole, "display"},   {BookingIdRole, "bookingId"}, {StateRole, "bookingState"},
        {IsOpenRole, "isOpen"},         {RiderRole, "rider"},         {CarIdRole, "carId"},
        {EtaSecondsRole, "etaSeconds"}, {FareRole, "fare"},           {CreatedMsRole, "createdMs"},
        {CanCancelRole, "canCancel"},
    };
}

ConsoleBackend *BookingListModel::backend() const
{
    return m_backend;
}

void BookingListModel::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    if (m_backend)
        disconnect(m_backend, nullptr, this, nullptr);
    m_backend = backend;
    if (m_backend)
        connect(m_backend, &ConsoleBackend::bookingsChanged, this, &BookingListModel::refresh);
    m_backend ? m_pollTimer.start() : m_pollTimer.stop();
    Q_EMIT backendChanged();
    refresh();
}

void BookingListModel::setFilterText(const QString &text)
{
    if (m_filterText == text)
        return;
    m_filterText = text;
    applyFilter();
    Q_EMIT filterChanged();
}

void BookingListModel::setOpenOnly(bool openOnly)
{
    if (m_openOnly == openOnly)
        return;
    m_openOnly = openOnly;
    applyFilter();
    Q_EMIT filterChanged();
}

void BookingListModel::refresh()
{
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    setBookings(fleet ? fleet->recentBookings(kMaxBookings) : std::vector<taxicore::BookingSnapshot>{});
}

bool BookingListModel::cancel(qint64 bookingId)
{
    return m_backend && m_backend->cancelBooking(bookingId); // bookingsChanged refreshes
}

QVariantMap BookingListModel::reassign(qint64 bookingId, int carId)
{
    if (!m_backend)
        return {{QStringLiteral("ok"), false}, {QStringLiteral("error"), tr("the server is not running")}};
    return m_backend->reassignBooking(bookingId, carId); // bookingsChanged refreshes
}

int BookingListModel::rowOf(qint64 bookingId) const
{
    const auto it =
        std::find_if(m_rows.begin(), m_rows.end(), [bookingId](const auto &b) { return qint64(b.id) == bookingId; });
    return it == m_rows.end() ? -1 : int(it - m_rows.begin());
}

void BookingListModel::setBookings(std::vector<taxicore::BookingSnapshot> bookings)
{
    std::sort(bookings.begin(), bookings.end(), [](const auto &a, const auto &b) { return a.id > b.id; });
    m_all = std::move(bookings);
    applyFilter();
}

bool BookingListModel::accepts(const taxicore::BookingSnapshot &b) const
{
    if (m_openOnly && !taxicore::isOpen(b.state))
        return false;
    const QString text = m_filterText.trimmed();
    if (text.isEmpty())
        return true;
    QString number = text;
    if (number.startsWith(QLatin1Char('#')))
        number.remove(0, 1);
    return b.riderId.contains(text, Qt::CaseInsensitive) || QString::number(b.id) == number
           || QString::number(b.carId) == number
           || QLatin1String(taxicore::bookingStateName(b.state)).startsWith(text, Qt::CaseInsensitive);
}

void BookingListModel::applyFilter()
{
    std::vector<taxicore::BookingSnapshot> wanted;
    for (const auto &b : m_all) {
        if (accepts(b))
            wanted.push_back(b);
    }
    const int before = int(m_rows.size());

    // 1. Remove the rows that are gone, in contiguous runs from the end.
    std::unordered_set<uint64_t> wantedIds;
    for (const auto &b : wanted)
        wantedIds.insert(b.id);
    const auto isWanted = [&wantedIds](uint64_t id) { return wantedIds.contains(id); };
    for (int row = int(m_rows.size()) - 1; row >= 0;) {
        if (isWanted(m_rows[size_t(row)].id)) {
            --row;
            continue;
        }
        int first = row;
        while (first > 0 && !isWanted(m_rows[size_t(first - 1)].id))
            --first;
        beginRemoveRows({}, first, row);
        m_rows.erase(m_rows.begin() + first, m_rows.begin() + row + 1);
        endRemoveRows();
        row = first - 1;
    }

    // 2. Both lists are now ordered by descending id and m_rows ⊆ wanted: merge in runs.
    size_t i = 0;
    while (i < wanted.size()) {
        if (i < m_rows.size() && m_rows[i].id == wanted[i].id) {
            if (!sameRow(m_rows[i], wanted[i])) {
                m_rows[i] = wanted[i];
                const QModelIndex index = createIndex(int(i), 0);
                Q_EMIT dataChanged(index, index);
            }
            ++i;
            continue;
        }
        size_t last = i;
        while (last + 1 < wanted.size() && (i >= m_rows.size() || wanted[last + 1].id != m_rows[i].id))
            ++last;
        beginInsertRows({}, int(i), int(last));
        m_rows.insert(m_rows.begin() + std::ptrdiff_t(i), wanted.begin() + std::ptrdiff_t(i),
                      wanted.begin() + std::ptrdiff_t(last) + 1);
        endInsertRows();
        i = last + 1;
    }
    if (int(m_rows.size()) != before)
        Q_EMIT countChanged();
}
