#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

namespace taxicore {

// The reverse proxies whose X-Forwarded-For is believed (--trusted-proxy): address ranges.
// Set once per process before any request is served (the primary from its options, each worker
// from its command line), then only read.
class TrustedProxies {
public:
    // Adds every range of a --trusted-proxy value: CIDRs or bare addresses (a single host),
    // IPv4 or IPv6, comma-separated. False with a message naming the bad entry.
    bool add(const QString &value, QString &error);
    bool isEmpty() const { return m_subnets.isEmpty(); }
    bool contains(const QHostAddress &address) const;
    // The ranges in CIDR form, one per entry (to hand them on as --trusted-proxy values).
    QStringList toStrings() const;

private:
    QList<QPair<QHostAddress, int>> m_subnets;
};

void setTrustedProxies(TrustedProxies proxies);
const TrustedProxies &trustedProxies();

// Who a request is from, as far as limits and loopback trust are concerned.
struct ClientAddress {
    QHostAddress address;   // the client: the peer, or the one its trusted proxy names
    bool forwarded = false; // the peer is a trusted proxy and the header named a client
    bool malformed = false; // a trusted proxy sent an X-Forwarded-For entry that is no address
};

// `forwardedFor`: the X-Forwarded-For values of the request joined by commas; null when the
// request has none, empty (not null) when it has an empty one.
// From a peer outside `proxies` the header is ignored (a client cannot pick its own rate-limit
// bucket). From a trusted peer the client is the rightmost entry that is not itself trusted
// (each hop appends the address it saw, so entries left of the first untrusted one are the
// client's own claims); when every entry is trusted, the leftmost. An entry that is no address
// (an empty field too),
// met before that client is found, makes the result `malformed` (the address is then the peer).
// IPv4-mapped IPv6 addresses count as IPv4. Cheap when the peer is not trusted: no parsing.
ClientAddress resolveClientAddress(const QHostAddress &peer, const QByteArray &forwardedFor,
                                   const TrustedProxies &proxies);

// The address as a plain IPv4 one when it is IPv4-mapped IPv6 (::ffff:a.b.c.d), else as it is.
QHostAddress plainAddress(const QHostAddress &address);

} // namespace taxicore
