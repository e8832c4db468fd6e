#include "http/LiveFeed.h"

#include "fleet/FleetStore.h"
#include "wire/ApiError.h"
#include "http/BookingOwnership.h"
#include "http/BookingView.h"
#include "http/ClientAddress.h"
#include "http/FeedMessageBudget.h"
#include "http/JsonViews.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"
#include "metrics/MetricsRecorder.h"
#include "pricing/PricedRide.h"
#include "pricing/PricingBoard.h"
#include "pricing/Tariff.h"
#include "pricing/TripEstimator.h"

#include <QAbstractHttpServer>
#include <QCoreApplication>
#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaMethod>
#include <QWebSocket>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace taxicore {

namespace {

constexpr int kDefaultIntervalMs = 500;
constexpr double kDefaultRadiusM = 1000;
constexpr double kMaxRadiusM = 50'000;
constexpr int kDefaultLimit = 20;
constexpr int kMaxLimit = 100;
constexpr qint64 kMaxIncomingBytes = 4096;
constexpr qint64 kMinImmediateGapMs = 250;
// Road ETAs cost ~0.25 ms per distinct rider cell; past this much work in one tick the rest of
// the tick uses straight-line ETAs, so the feed's CPU stays bounded however many riders it has.
constexpr qint64 kRoadEtaBudgetMs = 25;
// An update tick's clients are served evenly over this share of its interval, a few every
// kTickStepMs, and never more than kTickSliceNs of work before the event loop runs again. In one
// piece, a tick over 667 riders held its thread 30-70 ms every 500 ms; the ticks of a cluster's
// nodes coincide (their riders subscribed together), so the machine's cores were full for those
// milliseconds and the follows, the Redis feed and the HTTP answers of every node waited on the
// run queue (docs/benchmarks.md §18).
constexpr int kTickSpreadPercent = 80;
constexpr int kTickStepMs = 20;
constexpr qint64 kTickSliceNs = 1'000'000;
// A refused or closing socket that does not finish the closing handshake is aborted after this.
constexpr int kCloseGraceMs = 3000;
// How often every client's write backlog is checked (dropClientsNotReading): a flood of pings
// at loopback speed queues about 9 MB of pongs in this time before the client is dropped.
constexpr int kBacklogCheckMs = 50;

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// Browsers always send Origin on a WebSocket handshake; other clients may omit it. A page from
// another site must not read the feed through a visitor's browser (cross-site WebSocket
// hijacking): the Origin's host must be the host the request was sent to (its Host header).
// Scheme and port are compared only as far as this server can know them. Behind a proxy that
// ends TLS (docs/cluster.md: nginx `listen 443 ssl`) the request reaches us as plain ws with
// the page's Host, often without its port (a browser leaves out a default port, nginx's `$host`
// drops any): an https page's Origin (443) against ws (80) refused every browser. So the ports
// must match only when both name one; the host name is what tells two sites apart (a browser's
// cookies do not separate ports or schemes either). X-Forwarded-Proto/-Host are not used: they
// would need --trusted-proxy to be believed, and the host compare already serves every proxy
// that passes the page's Host on, as deploy/nginx does.
bool originAllowed(const QWebSocket &socket)
{
    const QString origin = socket.origin();
    if (origin.isEmpty())
        return true;
    const QUrl from(origin);
    const QUrl to = socket.requestUrl();
    if (!from.isValid() || from.host().isEmpty())
        return false;
    if (from.host().compare(to.host(), Qt::CaseInsensitive) != 0)
        return false;
    return from.port() < 0 || to.port() < 0 || from.port() == to.port();
}

// {"type":"error",...} refusing to follow booking `id` (BookingAccess::NoToken or NotOwner).
QByteArray followRefusal(BookingAccess access, uint64_t id)
{
    const bool noToken = access == BookingAccess::NoToken;
    const QString message =
        noToken ? QStringLiteral("following booking %1 needs its rider_token in the subscribe message (the "
                                 "rider_token its booking answer gave)")
                      .arg(id)
                : QStringLiteral("rider_token is not the rider token of booking %1").arg(id);
    return compact({{QStringLiteral("type"), QStringLiteral("error")},
                    {QStringLiteral("error"),
                     noToken ? QStringLiteral("rider_token_required") : QStringLiteral("not_your_booking")},
                    {QStringLiteral("message"), message},
                    {QStringLiteral("booking_id"), qint64(id)}});
}

// A subscribe's booking_id: 0 without one (absent or null); a positive whole number (up to 2^53,
// while a JSON number is exact) or a string of decimal digits; nullopt for anything else
// ("abc", "7x", 0, 7.9, true), which was once read as 0 or cut to 7 and taken without a word.
std::optional<uint64_t> subscribedBookingId(const QJsonValue &value)
{
    if (value.isUndefined() || value.isNull())
        return uint64_t(0);
    if (value.isDouble()) {
        const double number = value.toDouble();
        if (number >= 1 && number <= 9007199254740992.0 && std::floor(number) == number)
            return uint64_t(number);
        return std::nullopt;
    }
    if (!value.isString())
        return std::nullopt;
    const QString text = value.toString();
    if (text.isEmpty() || !std::all_of(text.cbegin(), text.cend(), [](QChar c) { return c >= u'0' && c <= u'9'; }))
        return std::nullopt;
    bool ok = false;
    const uint64_t id = text.toULongLong(&ok);
    if (!ok || id == 0)
        return std::nullopt;
    return id;
}

// Whether a rider following this car would see anything new: a position write moves updatedMs
// (outside a cluster two within one millisecond may not), and state changes do not.
bool sameCar(const CarSnapshot &a, const CarSnapshot &b)
{
    return a.id == b.id && a.updatedMs == b.updatedMs && a.position.lat == b.position.lat
           && a.position.lng == b.position.lng && a.heading == b.heading && a.speedKmh == b.speedKmh
           && a.state == b.state && a.bookingId == b.bookingId;
}

} // namespace

struct LiveFeed::Client {
    QWebSocket *socket = nullptr;
    QHostAddress address; // counted toward m_maxClientsPerAddress; null for loopback
    bool subscribed = false;
    LatLng centre;
    double radiusM = kDefaultRadiusM;
    int limit = kDefaultLimit;
    uint64_t bookingId = 0;
    // The subscribe's rider_token, and whether it was checked against bookingId's owner: a booking
    // made through another node of a cluster may not be in this copy yet, and is checked when it is.
    QByteArray riderToken;
    bool ownerProven = false;
    qint64 pendingBytes = 0;    // handed to the socket and not yet written to the network
    qint64 lastImmediateMs = 0; // when a subscribe was last answered at once
    FeedMessageBudget budget;   // its messages: past this it is closed (1008)
    // Following bookingId between updates (LiveFeed::followTick): what was last pushed or seen.
    bool following = false; // the booking is open, or not in this fleet yet
    int followedCarId = 0;  // 0: the booking is not known here yet
    BookingState seenState = BookingState::Requested;
    CarSnapshot seenCar;
    bool recheckBooking = false; // the car changed: a move's booking half may land a moment later

    // What LiveFeed::indexFollowers files this client under: when it changes, the index is stale.
    std::tuple<bool, int, uint64_t> indexEntry() const { return {following, followedCarId, bookingId}; }
};

LiveFeed::LiveFeed(QAbstractHttpServer &server, const FleetStore &fleet, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_fleet(fleet)
    , m_fallbackEstimator(std::make_unique<StraightLineEstimator>())
{
    m_timer.setInterval(kDefaultIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &LiveFeed::tick);
    // Precise: a coarse timer may fire up to 5 % late, and ticks this short are the latency.
    m_followTimer.setTimerType(Qt::PreciseTimer);
    m_followTimer.setInterval(kFollowIntervalMs);
    connect(&m_followTimer, &QTimer::timeout, this, &LiveFeed::followTick);
    connect(&server, &QAbstractHttpServer::newWebSocketConnection, this, &LiveFeed::acceptPending);
    // A fleet that signals its changes (cluster/ClusterFleet is also a QObject): no follow tick.
    if (const auto *source = dynamic_cast<const QObject *>(&m_fleet)) {
        const QMetaObject *theirs = source->metaObject();
        const QMetaObject *mine = metaObject();
        const auto find = [](const QMetaObject *meta, const char *signature, bool signal) {
            const QByteArray normal = QMetaObject::normalizedSignature(signature);
            const int index = signal ? meta->indexOfSignal(normal) : meta->indexOfSlot(normal);
            return index < 0 ? QMetaMethod() : meta->method(index);
        };
        const QMetaMethod changed =
            find(theirs, "fleetChanged(const QList<int> &, const QList<qint64> &, const QList<quint64> &)", true);
        const QMetaMethod reloaded = find(theirs, "fleetReloaded()", true);
        const QMetaMethod onChanged =
            find(mine, "onFleetChanged(const QList<int> &, const QList<qint64> &, const QList<quint64> &)", false);
        const QMetaMethod onReloaded = find(mine, "onFleetReloaded()", false);
        if (changed.isValid() && reloaded.isValid()) {
            m_eventDriven = connect(source, changed, this, onChanged, Qt::QueuedConnection)
                            && connect(source, reloaded, this, onReloaded, Qt::QueuedConnection);
            if (!m_eventDriven)
                disconnect(source, nullptr, this, nullptr);
        }
    }
    m_sliceTimer.setSingleShot(true);
    m_sliceTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_sliceTimer, &QTimer::timeout, this, &LiveFeed::runTickSlice);
    m_retryTimer.setSingleShot(true);
    m_retryTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_retryTimer, &QTimer::timeout, this, &LiveFeed::followMarked);
    // A client can make the server write without the feed sending: every ping it sends is answered
    // with a pong. One that pings and never reads grew the server by all it sent (600 MB in 3 s);
    // QWebSocket tells nobody about a ping, so its write backlog is looked at this often.
    m_backlogTimer.setInterval(kBacklogCheckMs);
    connect(&m_backlogTimer, &QTimer::timeout, this, &LiveFeed::dropClientsNotReading);
}

LiveFeed::~LiveFeed()
{
    closeAllClients();
}

void LiveFeed::closeAllClients()
{
    // The server is stopping: each client is told so with 1001 (going away), and a page can tell
    // that from a lost connection. Never blocking: close() hands the small frame to the kernel
    // (a flush without waiting) and closes; for a client that does not read, the frame is lost
    // with its backlog when the socket, our child, is deleted with us.
    const auto sockets = m_clients.keys();
    m_clients.clear();
    m_clientsPerAddress.clear();
    clientsChanged();
    m_indexStale = true;
    for (QWebSocket *socket : sockets) {
        socket->disconnect(this);
        socket->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("server shutting down"));
    }
}

bool LiveFeed::isWebSocketUpgrade(const QHttpServerRequest &request)
{
    return request.value(QByteArrayLiteral("upgrade")).compare(QByteArrayLiteral("websocket"), Qt::CaseInsensitive) == 0
           && request.value(QByteArrayLiteral("connection")).toLower().contains("upgrade");
}

bool LiveFeed::isUpgradeRequest(const QHttpServerRequest &request)
{
    return request.url().path() == QLatin1String(kPath) && isWebSocketUpgrade(request);
}

void LiveFeed::registerRoutes(RouteTable &router)
{
    router.add(HttpMethod::Get, kPath, [](const ApiRequest &) {
        ApiResponse r = errorResponse(
            426, "upgrade_required",
            QStringLiteral("%1 is a WebSocket feed: connect with Upgrade: websocket").arg(QLatin1String(kPath)));
        r.headers.append({QByteArrayLiteral("Upgrade"), QByteArrayLiteral("websocket")});
        return r;
    });
}

void LiveFeed::acceptPending()
{
    while (std::unique_ptr<QWebSocket> owned = m_server.nextPendingWebSocketConnection()) {
        QWebSocket *socket = owned.release();
        socket->setParent(this);
        connect(socket, &QWebSocket::disconnected, socket, &QObject::deleteLater);
        const auto refuse = [socket](QWebSocketProtocol::CloseCode code, const QString &reason) {
            socket->close(code, reason);
            QTimer::singleShot(kCloseGraceMs, socket, [socket] {
                socket->abort();
                socket->deleteLater();
            });
        };
        if (socket->requestUrl().path() != QLatin1String(kPath)) {
            refuse(QWebSocketProtocol::CloseCodePolicyViolated, QStringLiteral("no feed at this path"));
            continue;
        }
        if (!originAllowed(*socket)) {
            refuse(QWebSocketProtocol::CloseCodePolicyViolated, QStringLiteral("origin not allowed"));
            continue;
        }
        if (m_clients.size() >= m_maxClients) {
            // 1008, not 1013 "try again later": Qt's own clients treat 1013 as a protocol error.
            refuse(QWebSocketProtocol::CloseCodePolicyViolated, QStringLiteral("too many live clients; retry shortly"));
            continue;
        }
        // Behind a trusted proxy the client is the one its X-Forwarded-For names (Qt hands the
        // handshake's fields on with the socket). A malformed one never gets here: HttpService
        // refused the upgrade with 400.
        const ClientAddress from =
            resolveClientAddress(plainAddress(socket->peerAddress()),
                                 socket->request().rawHeader(QByteArrayLiteral("X-Forwarded-For")), trustedProxies());
        const QHostAddress counted = from.address.isLoopback() ? QHostAddress() : from.address;
        if (!counted.isNull() && m_clientsPerAddress.value(counted) >= m_maxClientsPerAddress) {
            refuse(
                QWebSocketProtocol::CloseCodePolicyViolated,
                QStringLiteral("too many live clients from one address (%1); close one").arg(m_maxClientsPerAddress));
            continue;
        }
        socket->setMaxAllowedIncomingMessageSize(kMaxIncomingBytes);
        socket->setMaxAllowedIncomingFrameSize(kMaxIncomingBytes);
        auto client = std::make_shared<Client>();
        client->socket = socket;
        client->address = counted;
        m_clients.insert(socket, client);
        clientsChanged();
        if (!counted.isNull())
            ++m_clientsPerAddress[counted];
        if (!m_backlogTimer.isActive())
            m_backlogTimer.start();
        connect(socket, &QWebSocket::textFrameReceived, this, [this, socket] { chargeFrame(socket); });
        connect(socket, &QWebSocket::binaryFrameReceived, this, [this, socket] { chargeFrame(socket); });
        connect(socket, &QWebSocket::textMessageReceived, this,
                [this, socket](const QString &text) { onMessage(socket, text); });
        connect(socket, &QWebSocket::binaryMessageReceived, this, [this, socket](const QByteArray &) {
            drop(socket, QWebSocketProtocol::CloseCodeDatatypeNotSupported, QStringLiteral("text JSON only"));
        });
        connect(socket, &QWebSocket::bytesWritten, this, [this, socket](qint64 written) {
            if (auto it = m_clients.find(socket); it != m_clients.end())
                (*it)->pendingBytes = std::max<qint64>(0, (*it)->pendingBytes - written);
        });
        connect(socket, &QWebSocket::disconnected, this, [this, socket] { removeClient(socket); });
        // A socket that never subscribes costs a descriptor and a connection slot for nothing.
        QTimer::singleShot(m_idleTimeoutMs, socket, [this, socket] {
            if (auto it = m_clients.find(socket); it != m_clients.end() && !(*it)->subscribed)
                drop(socket, QWebSocketProtocol::CloseCodePolicyViolated,
                     QStringLiteral("no subscribe within %1 ms").arg(m_idleTimeoutMs));
        });
        send(*client, compact({
                          {QStringLiteral("type"), QStringLiteral("hello")},
                          {QStringLiteral("interval_ms"), m_timer.interval()},
                          // 0: event-driven, no follow tick (see LiveFeed.h).
                          {QStringLiteral("follow_interval_ms"), m_eventDriven ? 0 : m_followTimer.interval()},
                          {QStringLiteral("max_radius_m"), kMaxRadiusM},
                      }));
    }
}

bool LiveFeed::removeClient(QWebSocket *socket)
{
    const auto it = m_clients.constFind(socket);
    if (it == m_clients.constEnd())
        return false;
    if (const QHostAddress address = (*it)->address; !address.isNull()) {
        if (--m_clientsPerAddress[address] <= 0)
            m_clientsPerAddress.remove(address);
    }
    if ((*it)->following)
        m_indexStale = true; // the index holds followers only
    m_clients.erase(it);
    clientsChanged();
    return true;
}

void LiveFeed::publishClientCount(MetricsRecorder &metrics)
{
    m_metrics = &metrics;
    clientsChanged();
}

void LiveFeed::clientsChanged()
{
    if (!m_metrics)
        return;
    const int now = int(m_clients.size());
    m_metrics->feedClientsChanged(now - m_publishedClients);
    m_publishedClients = now;
}

void LiveFeed::drop(QWebSocket *socket, int closeCode, const QString &reason)
{
    if (!removeClient(socket))
        return;
    socket->close(static_cast<QWebSocketProtocol::CloseCode>(closeCode), reason);
    QTimer::singleShot(kCloseGraceMs, socket, [socket] {
        socket->abort();
        socket->deleteLater();
    });
}

// Charged per frame, not per message: a message's frames cost the thread a parse each, and a
// message that never ends (a text frame, then continuation frames without payload for ever)
// never reaches the 4 KiB bound nor a message. A page sends each message in one frame.
void LiveFeed::chargeFrame(QWebSocket *socket)
{
    const auto it = m_clients.find(socket);
    if (it == m_clients.end() || (*it)->budget.take(clock::monotonicMs()))
        return;
    drop(socket, QWebSocketProtocol::CloseCodePolicyViolated,
         QStringLiteral("more than %1 messages a second (burst %2)")
             .arg(FeedMessageBudget::kPerSecond)
             .arg(FeedMessageBudget::kBurst));
}

void LiveFeed::onMessage(QWebSocket *socket, const QString &text)
{
    auto it = m_clients.find(socket);
    if (it == m_clients.end())
        return;
    std::shared_ptr<Client> client = *it; // its frames were charged to its budget (chargeFrame)
    const auto fail = [&](const char *code, const QString &message) {
        send(*client, compact({{QStringLiteral("type"), QStringLiteral("error")},
                               {QStringLiteral("error"), QLatin1String(code)},
                               {QStringLiteral("message"), message}}));
    };
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &parseError);
    const QJsonObject subscribe = document.object().value(QStringLiteral("subscribe")).toObject();
    if (parseError.error != QJsonParseError::NoError || subscribe.isEmpty()) {
        fail("invalid_message", QStringLiteral("send {\"subscribe\":{\"lat\":..,\"lng\":..,\"radius_m\":..,"
                                               "\"booking_id\":..}}"));
        return;
    }
    const QJsonValue lat = subscribe.value(QStringLiteral("lat"));
    const QJsonValue lng = subscribe.value(QStringLiteral("lng"));
    const LatLng centre{lat.toDouble(NAN), lng.toDouble(NAN)};
    if (!lat.isDouble() || !lng.isDouble() || !std::isfinite(centre.lat) || !std::isfinite(centre.lng)) {
        fail("invalid_position", QStringLiteral("subscribe needs numeric lat and lng"));
        return;
    }
    if (!serviceArea().contains(centre)) {
        fail("outside_service_area",
             QStringLiteral("(%1, %2) is outside the service area").arg(centre.lat).arg(centre.lng));
        return;
    }
    const double radius = subscribe.value(QStringLiteral("radius_m")).toDouble(kDefaultRadiusM);
    const double limit = subscribe.value(QStringLiteral("limit")).toDouble(kDefaultLimit);
    if (!(radius >= 1 && radius <= kMaxRadiusM) || !(limit >= 1 && limit <= kMaxLimit)) {
        fail("out_of_range",
             QStringLiteral("radius_m must be in [1, %1], limit in [1, %2]").arg(kMaxRadiusM).arg(kMaxLimit));
        return;
    }
    const QJsonValue booking = subscribe.value(QStringLiteral("booking_id"));
    const std::optional<uint64_t> bookingId = subscribedBookingId(booking);
    if (!bookingId) {
        fail("invalid_booking_id",
             QStringLiteral("booking_id must be a positive whole number, or a string of its digits"));
        return;
    }
    // A booking is followed only by its rider (or the operator): its car, pickup and fare are theirs.
    const QByteArray riderToken = subscribe.value(QStringLiteral("rider_token")).toString().toLatin1();
    std::optional<BookingSnapshot> known;
    if (*bookingId) {
        known = m_fleet.booking(*bookingId);
        const BookingAccess access =
            riderToken.isEmpty() ? BookingAccess::NoToken
                                 : (known ? bookingAccess(riderToken, known->riderTokenHash) : BookingAccess::Granted);
        if (access != BookingAccess::Granted) {
            send(*client, followRefusal(access, *bookingId));
            return;
        }
    }
    client->subscribed = true;
    client->centre = centre;
    client->radiusM = radius;
    client->limit = int(limit);
    const auto indexedAs = client->indexEntry();
    client->bookingId = *bookingId;
    client->riderToken = riderToken;
    client->ownerProven = known.has_value();
    startFollowing(*client);
    // The follower index (event-driven) is rebuilt over every client: only when this one's
    // entry in it changed, not for each subscribe that moves the point or repeats itself.
    if (client->indexEntry() != indexedAs)
        m_indexStale = true;
    // The first picture now, not after a tick; a client re-subscribing faster than this gets
    // its answer with the next tick, so subscribe messages cannot buy extra queries.
    const qint64 now = clock::monotonicMs();
    if (now - client->lastImmediateMs >= kMinImmediateGapMs) {
        client->lastImmediateMs = now;
        TickCache cache;
        cache.slice.start();
        sendUpdate(*client, cache);
    }
    if (!m_timer.isActive())
        m_timer.start();
    if (client->following && !m_eventDriven && !m_followTimer.isActive())
        m_followTimer.start();
}

bool LiveFeed::mayShow(Client &client, const BookingSnapshot &booking)
{
    if (client.ownerProven)
        return true;
    const BookingAccess access = bookingAccess(client.riderToken, booking.riderTokenHash);
    if (access == BookingAccess::Granted) {
        client.ownerProven = true;
        return true;
    }
    // Not this client's booking after all: it stays subscribed to its point, without the booking.
    send(client, followRefusal(access, client.bookingId));
    client.bookingId = 0;
    client.following = false;
    client.followedCarId = 0;
    client.seenCar = {};
    m_indexStale = true;
    return false;
}

void LiveFeed::startFollowing(Client &client)
{
    client.following = client.bookingId != 0;
    client.followedCarId = 0;
    client.seenState = BookingState::Requested;
    client.seenCar = {};
    client.recheckBooking = false;
    if (!client.following)
        return;
    const auto booking = m_fleet.booking(client.bookingId);
    if (!booking)
        return; // booked through another node and not announced here yet: followTick looks again
    if (!mayShow(client, *booking))
        return;
    client.followedCarId = booking->carId;
    client.seenState = booking->state;
    client.following = isOpen(booking->state);
    if (const auto car = m_fleet.car(booking->carId))
        client.seenCar = *car;
}

void LiveFeed::followTick()
{
    m_followers.clear();
    for (const std::shared_ptr<Client> &client : std::as_const(m_clients))
        if (client->following)
            m_followers.push_back(client);
    if (m_followers.empty()) {
        m_followTimer.stop();
        return;
    }
    ++m_followPasses;
    for (const std::shared_ptr<Client> &client : m_followers) {
        if (!m_clients.contains(client->socket))
            continue; // dropped by a send earlier in this tick
        pushFollow(*client);
    }
    m_followers.clear();
}

bool LiveFeed::pushFollow(Client &client)
{
    const int carBefore = client.followedCarId;
    const bool followingBefore = client.following;
    const FollowChange change = followChanged(client);
    if (client.followedCarId != carBefore || client.following != followingBefore)
        m_indexStale = true;
    if (change == FollowChange::None)
        return false;
    QByteArray message = QByteArrayLiteral("{\"type\":\"follow\",\"t\":");
    message += QByteArray::number(qlonglong(clock::wallMs()));
    message += ",\"booking_id\":";
    message += QByteArray::number(qulonglong(client.bookingId));
    message += ",\"car\":";
    message += client.seenCar.id ? compact(carJson(client.seenCar)) : QByteArrayLiteral("null");
    if (change == FollowChange::Booking) {
        // The booking itself moved: its whole view, as an update carries it.
        message += ",\"booking\":";
        message += bookingJsonBytes(client);
    }
    message += '}';
    // Out now: inside a long update tick the socket would otherwise write only once the
    // tick returns to the event loop.
    if (send(client, message))
        client.socket->flush();
    return true;
}

void LiveFeed::indexFollowers()
{
    if (!m_indexStale)
        return;
    m_indexStale = false;
    m_byCar.clear();
    m_byBooking.clear();
    for (const std::shared_ptr<Client> &client : std::as_const(m_clients)) {
        if (!client->following)
            continue;
        if (client->followedCarId)
            m_byCar[client->followedCarId].append(client->socket);
        m_byBooking[client->bookingId].append(client->socket);
    }
}

void LiveFeed::mark(QWebSocket *socket, qint64 carVersion, bool booking)
{
    Hint &hint = m_marked[socket];
    hint.carVersion = std::max(hint.carVersion, carVersion);
    hint.booking = hint.booking || booking;
}

void LiveFeed::schedulePass()
{
    if (m_passPosted || m_marked.isEmpty())
        return;
    m_passPosted = true;
    QMetaObject::invokeMethod(this, &LiveFeed::followMarked, Qt::QueuedConnection);
}

void LiveFeed::onFleetChanged(const QList<int> &cars, const QList<qint64> &carVersions, const QList<quint64> &bookings)
{
    if (!m_eventDriven)
        return;
    indexFollowers();
    if (m_byBooking.isEmpty())
        return; // nobody follows anything: the signal costs this lookup only
    for (qsizetype i = 0; i < cars.size(); ++i)
        if (const auto it = m_byCar.constFind(cars[i]); it != m_byCar.constEnd())
            for (QWebSocket *socket : *it)
                mark(socket, i < carVersions.size() ? carVersions[i] : 0, false);
    for (const quint64 id : bookings)
        if (const auto it = m_byBooking.constFind(id); it != m_byBooking.constEnd())
            for (QWebSocket *socket : *it)
                mark(socket, 0, true);
    schedulePass();
}

void LiveFeed::onFleetReloaded()
{
    if (!m_eventDriven)
        return;
    for (const std::shared_ptr<Client> &client : std::as_const(m_clients))
        if (client->following)
            mark(client->socket, 0, false);
    schedulePass();
}

void LiveFeed::followMarked()
{
    m_passPosted = false;
    const qint64 now = clock::monotonicMs();
    // Retries that are due join this pass.
    for (auto it = m_retries.begin(); it != m_retries.end();) {
        if (it->dueMs > now) {
            ++it;
            continue;
        }
        Hint &marked = m_marked[it.key()];
        marked.carVersion = std::max(marked.carVersion, it->carVersion);
        marked.booking = marked.booking || it->booking;
        marked.tries = std::max(marked.tries, it->tries);
        it = m_retries.erase(it);
    }
    if (!m_marked.isEmpty()) {
        ++m_followPasses;
        const QHash<QWebSocket *, Hint> marked = std::exchange(m_marked, {});
        for (auto it = marked.begin(); it != marked.end(); ++it) {
            const std::shared_ptr<Client> client = m_clients.value(it.key());
            if (!client || !client->following)
                continue;
            const bool pushed = pushFollow(*client);
            if (!m_clients.contains(it.key()) || !client->following)
                continue;
            // Not in this copy yet (a worker hears of a change as its primary applies it): later.
            Hint hint = *it;
            const bool carBehind = hint.carVersion > 0 && client->seenCar.updatedMs < hint.carVersion;
            const bool bookingUnseen = hint.booking && !pushed;
            if (!carBehind && !bookingUnseen)
                continue;
            if (hint.tries >= (carBehind ? kCarRetries : kBookingRetries))
                continue; // lost, or not this copy's: the update ticks' checks remain
            hint.dueMs = now + (qint64(1) << hint.tries);
            ++hint.tries;
            Hint &retry = m_retries[it.key()];
            retry.carVersion = std::max(retry.carVersion, hint.carVersion);
            retry.booking = retry.booking || hint.booking;
            retry.tries = hint.tries;
            retry.dueMs = retry.dueMs ? std::min(retry.dueMs, hint.dueMs) : hint.dueMs;
        }
    }
    if (m_retries.isEmpty()) {
        m_retryTimer.stop();
        return;
    }
    qint64 due = std::numeric_limits<qint64>::max();
    for (const Hint &hint : std::as_const(m_retries))
        due = std::min(due, hint.dueMs);
    m_retryTimer.start(int(std::clamp<qint64>(due - now, 0, 1000)));
}

// One follower's check, the hot path of followTick: one car slot read while nothing changes; the
// booking is read only when its car changed, on the tick after, or while it is not known here.
// Unless None, seenCar/seenState/followedCarId then hold what to tell the client.
LiveFeed::FollowChange LiveFeed::followChanged(Client &client)
{
    std::optional<BookingSnapshot> booking;
    bool bookingChanged = false;
    const bool recheck = client.recheckBooking;
    client.recheckBooking = false;
    const auto readBooking = [&] {
        booking = m_fleet.booking(client.bookingId);
        if (!booking) {
            // Gone from the fleet (its ring slot reused) after being known: the updates say so.
            if (client.followedCarId)
                client.following = false;
            return false;
        }
        if (!mayShow(client, *booking))
            return false;
        bookingChanged = booking->state != client.seenState || booking->carId != client.followedCarId;
        return true;
    };
    if ((client.followedCarId == 0 || recheck) && !readBooking())
        return FollowChange::None;
    auto car = m_fleet.car(booking ? booking->carId : client.followedCarId);
    bool carChanged = car && !sameCar(*car, client.seenCar);
    if (carChanged && !booking) {
        if (!readBooking())
            return FollowChange::None;
        if (booking->carId != car->id) { // reassigned: the rider's car is another one now
            car = m_fleet.car(booking->carId);
            carChanged = car.has_value();
        }
    }
    if (!carChanged && !bookingChanged)
        return FollowChange::None;
    // An ended booking shows no car: its former car serves another booking by now, whose rider's
    // pickup it heads for (as GET /api/v1/bookings/{id} shows none).
    if (car && isOpen(booking->state))
        client.seenCar = *car;
    else
        client.seenCar = {};
    client.seenState = booking->state;
    client.followedCarId = booking->carId;
    client.following = isOpen(booking->state);
    // A move writes the car and the booking one after the other: look at the booking once more.
    client.recheckBooking = carChanged;
    return bookingChanged ? FollowChange::Booking : FollowChange::Car;
}

void LiveFeed::tick()
{
    if (m_clients.isEmpty()) {
        m_timer.stop();
        return;
    }
    if (m_tickNext < m_tickQueue.size())
        return; // the last tick is still being served (an overloaded thread): no second one on top
    m_tick = TickCache{};
    m_tick.sinceStart.start();
    m_tickQueue.assign(m_clients.cbegin(), m_clients.cend());
    m_tickNext = 0;
    runTickSlice();
}

void LiveFeed::runTickSlice()
{
    // The follows signalled while the thread did other work go first: they are the feed's latency.
    if (!m_marked.isEmpty())
        followMarked();
    const std::size_t total = m_tickQueue.size();
    // Client i is due i/total of the way through the spread; this slice serves those due before
    // the next step, so each wake-up serves a few.
    const qint64 spreadMs = qint64(m_timer.interval()) * kTickSpreadPercent / 100;
    const qint64 horizonMs = m_tick.sinceStart.elapsed() + kTickStepMs;
    const std::size_t due =
        spreadMs <= horizonMs ? total : std::min(total, std::size_t(qint64(total) * horizonMs / spreadMs) + 1);
    m_tick.slice.start();
    while (m_tickNext < due && m_tick.slice.nsecsElapsed() < kTickSliceNs) {
        const std::shared_ptr<Client> client = std::move(m_tickQueue[m_tickNext++]);
        if (client->subscribed && isCurrent(*client))
            sendUpdate(*client, m_tick);
        // The safety net over an event-driven fleet: every follower once per update tick, for a
        // change nothing signalled.
        if (m_eventDriven && client->following && isCurrent(*client)) {
            m_tick.followersChecked = true;
            pushFollow(*client);
        }
    }
    m_tick.workedNs += m_tick.slice.nsecsElapsed();
    if (m_tickNext < total) {
        // Behind (a slice's work was not enough): again once the waiting I/O and follows ran.
        m_sliceTimer.start(m_tickNext < due ? 0 : kTickStepMs);
        return;
    }
    m_tickQueue.clear();
    m_tickNext = 0;
    m_followPasses += m_tick.followersChecked ? 1 : 0;
}

bool LiveFeed::isCurrent(const Client &client) const
{
    // Not dropped since the tick began (a send drops a client that does not read; a socket's
    // address may since belong to a new client).
    const auto it = m_clients.constFind(client.socket);
    return it != m_clients.constEnd() && it->get() == &client;
}

QByteArray LiveFeed::carsJson(const Client &client, TickCache &cache) const
{
    // ~10 m grid: neighbours get the same answer from the cache.
    const double lat = std::round(client.centre.lat * 1e4) / 1e4;
    const double lng = std::round(client.centre.lng * 1e4) / 1e4;
    const QString key = QStringLiteral("%1,%2,%3,%4").arg(lat).arg(lng).arg(client.radiusM).arg(client.limit);
    if (auto it = cache.cars.constFind(key); it != cache.cars.constEnd())
        return *it;
    if (cache.byRoad && cache.workedMs() > kRoadEtaBudgetMs)
        cache.byRoad = false;
    const LatLng centre{lat, lng};
    const std::vector<NearbyCar> found = m_fleet.nearby(centre, client.radiusM, client.limit);
    const TripEstimator &estimator = m_estimator && cache.byRoad ? *m_estimator : *m_fallbackEstimator;
    const std::vector<double> etas = found.empty() ? std::vector<double>{} : estimator.carEtasTo(centre, found);
    QByteArray bytes = nearbyCarsJson(found, etas); // the cars as GET /api/v1/cars/nearby writes them
    cache.cars.insert(key, bytes);
    return bytes;
}

QByteArray LiveFeed::bookingJsonBytes(Client &client, TickCache *cache)
{
    const auto booking = m_fleet.booking(client.bookingId);
    if (!booking)
        return compact({{QStringLiteral("booking_id"), qint64(client.bookingId)},
                        {QStringLiteral("state"), QStringLiteral("unknown")}});
    if (!mayShow(client, *booking))
        return {};
    // A booking's view costs a road ETA or two, every update of every follower: under the same
    // budget per tick as the cars' ETAs, so hundreds of followers cannot hold this thread.
    if (cache && cache->byRoad && cache->workedMs() > kRoadEtaBudgetMs)
        cache->byRoad = false;
    const bool byRoad = m_estimator && (!cache || cache->byRoad);
    const TripEstimator &estimator = byRoad ? *m_estimator : *m_fallbackEstimator;
    QJsonObject out = bookingView(m_fleet, estimator, *booking);
    if (booking->state == BookingState::Completed)
        out.insert(QStringLiteral("fare_total"), booking->fare); // what the rider page shows
    return compact(out);
}

void LiveFeed::sendUpdate(Client &client, TickCache &carsCache)
{
    QByteArray message = QByteArrayLiteral("{\"type\":\"update\",\"t\":");
    message += QByteArray::number(qlonglong(clock::wallMs()));
    message += ",\"cars\":";
    message += carsJson(client, carsCache);
    if (client.bookingId)
        if (const QByteArray booking = bookingJsonBytes(client, &carsCache); !booking.isEmpty()) {
            message += ",\"booking\":";
            message += booking;
        }
    message += '}';
    send(client, message);
}

bool LiveFeed::send(Client &client, const QByteArray &utf8Json)
{
    if (dropIfNotReading(client))
        return false;
    client.pendingBytes += client.socket->sendTextMessage(QString::fromUtf8(utf8Json));
    return true;
}

bool LiveFeed::dropIfNotReading(Client &client)
{
    QWebSocket *socket = client.socket;
    if (client.pendingBytes <= m_maxPendingBytes && socket->bytesToWrite() <= m_maxPendingBytes)
        return false;
    // A client that does not read is dropped rather than buffered without bound.
    removeClient(socket);
    socket->abort();
    socket->deleteLater();
    return true;
}

void LiveFeed::dropClientsNotReading()
{
    if (m_clients.isEmpty()) {
        m_backlogTimer.stop();
        return;
    }
    // A copy: dropping removes from m_clients.
    const QList<std::shared_ptr<Client>> clients = m_clients.values();
    for (const std::shared_ptr<Client> &client : clients)
        dropIfNotReading(*client);
}

} // namespace taxicore
