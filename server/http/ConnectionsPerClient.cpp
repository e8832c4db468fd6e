#include "http/ConnectionsPerClient.h"

#include "http/ClientAddress.h"
#include "http/ClientBuckets.h"
#include "http/OperatorAccess.h"
#include "region/SlotLock.h"

#include <QObject>
#include <algorithm>
#include <cstring>

namespace taxicore {

namespace {

bool isFree(const ClientConnections &entry)
{
    static const uint8_t zero[sizeof entry.client] = {};
    return std::memcmp(entry.client, zero, sizeof zero) == 0;
}

bool holds(const ClientConnections &entry, const Q_IPV6ADDR &key)
{
    return std::memcmp(entry.client, key.c, sizeof key.c) == 0;
}

int total(const ClientConnections &entry)
{
    int sum = 0;
    for (const uint16_t open : entry.open)
        sum += open;
    return sum;
}

std::size_t homeOf(const Q_IPV6ADDR &key, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed; // FNV-1a from a keyed start, then a finaliser
    for (uint8_t byte : key.c) {
        h ^= byte;
        h *= 1099511628211ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return std::size_t(h % kConnectionClients);
}

// The entry of `key` among those it may live in, or null. The caller holds connectionsLock.
ClientConnections *findEntry(AccessBlock &block, const Q_IPV6ADDR &key, ClientConnections **freeEntry = nullptr)
{
    const std::size_t home = homeOf(key, block.connectionsSeed);
    for (int i = 0; i < kConnectionProbe; ++i) {
        ClientConnections &entry = block.connections[(home + std::size_t(i)) % kConnectionClients];
        if (isFree(entry)) {
            if (freeEntry && !*freeEntry)
                *freeEntry = &entry;
        } else if (holds(entry, key)) {
            return &entry;
        }
    }
    return nullptr;
}

void releaseOne(AccessBlock &block, int slot, const Q_IPV6ADDR &key)
{
    SlotLock lock(block.connectionsLock);
    ClientConnections *entry = findEntry(block, key);
    // None, or none in this column: the primary gave them back already (this process was
    // presumed dead: never for a live one, so only a guard destroyed after that).
    if (!entry || entry->open[slot] == 0)
        return;
    --entry->open[slot];
    if (total(*entry) == 0)
        std::memset(static_cast<void *>(entry), 0, sizeof *entry);
}

// Lives as a child of a counted connection's socket: its count is given back when the socket is
// destroyed, however it ends (closed, refused later, upgraded to a feed WebSocket and closed
// there, or its guard destroyed).
class ConnectionCount : public QObject {
public:
    ConnectionCount(AccessBlock &block, int slot, const Q_IPV6ADDR &key, QObject *socket)
        : QObject(socket)
        , m_block(block)
        , m_slot(slot)
        , m_key(key)
    {
    }
    ~ConnectionCount() override { releaseOne(m_block, m_slot, m_key); }

private:
    AccessBlock &m_block;
    int m_slot;
    Q_IPV6ADDR m_key;
};

} // namespace

ConnectionsPerClient::ConnectionsPerClient(AccessBlock &block, int workerSlot, int limit)
    : m_block(block)
    , m_slot(std::clamp(workerSlot, 0, kMaxWorkers - 1))
    , m_limit(std::clamp(limit, 0, 65535))
{
}

Q_IPV6ADDR ConnectionsPerClient::keyOf(const QHostAddress &peer)
{
    const QHostAddress plain = plainAddress(peer);
    Q_IPV6ADDR key = clientKey(plain);
    if (plain.protocol() == QAbstractSocket::IPv6Protocol)
        std::fill(std::begin(key.c) + 8, std::end(key.c), uint8_t(0)); // its /64
    return key;
}

bool ConnectionsPerClient::isExempt(const QHostAddress &peer)
{
    const QHostAddress plain = plainAddress(peer);
    return (operatorAccessPolicy().trustLoopback && plain.isLoopback()) || trustedProxies().contains(plain);
}

bool ConnectionsPerClient::admit(const QHostAddress &peer, QObject *socket)
{
    if (m_limit <= 0 || peer.isNull() || isExempt(peer)) {
        return true;
    }
    const Q_IPV6ADDR key = keyOf(peer);
    {
        SlotLock lock(m_block.connectionsLock);
        ClientConnections *freeEntry = nullptr;
        ClientConnections *entry = findEntry(m_block, key, &freeEntry);
        if (!entry) {
            if (!freeEntry)
                return true; // no room near its home: served uncounted (see the class comment)
            entry = freeEntry;
            std::memcpy(entry->client, key.c, sizeof key.c);
        }
        if (total(*entry) >= m_limit) {
            return false;
        }
        ++entry->open[m_slot];
    }
    new ConnectionCount(m_block, m_slot, key, socket);
    return true;
}

void ConnectionsPerClient::releaseSlot(AccessBlock &block, int workerSlot)
{
    if (workerSlot < 0 || workerSlot >= kMaxWorkers)
        return;
    SlotLock lock(block.connectionsLock);
    for (ClientConnections &entry : block.connections) {
        if (isFree(entry))
            continue;
        entry.open[workerSlot] = 0;
        if (total(entry) == 0)
            std::memset(static_cast<void *>(&entry), 0, sizeof entry);
    }
}

int ConnectionsPerClient::openConnections(AccessBlock &block, const QHostAddress &peer)
{
    SlotLock lock(block.connectionsLock);
    const ClientConnections *entry = findEntry(block, keyOf(peer));
    return entry ? total(*entry) : 0;
}

} // namespace taxicore
