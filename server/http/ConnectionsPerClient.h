#pragma once

#include "region/RegionLayout.h"

#include <QHostAddress>

class QObject;

namespace taxicore {

// At most --max-connections-per-client (64; ConnectionLimits::maxConnectionsPerClient, 0: no cap)
// connections open at once from one client address on this machine, so one address cannot hold
// every connection --max-connections allows. The client is the TCP peer: the cap is decided when
// the connection is adopted, before any request is read. Not capped: a trusted loopback peer
// (--trust-loopback on: benchmarks, the console, local tools) and a --trusted-proxy peer (a proxy
// carries many riders on its connections; limit them there). IPv4-mapped IPv6 counts as IPv4,
// and an IPv6 peer by its /64 (a host is given a whole /64 and picks its addresses in it).
//
// The counts live in the region (AccessBlock::connections), so every process of the machine
// counts the same ones: in processes mode the connections of one address spread over the
// workers, whichever policy hands them out. Each process counts in its worker slot's column; a
// connection is counted by the guard that adopted it, once, and given back when its socket is
// destroyed (a feed WebSocket too, while the feed holds it). The primary clears a worker's column
// when the supervisor sees the worker die (releaseSlot), so a kill -9 leaks nothing.
//
// An address with no room in its part of the table (kConnectionProbe entries from its keyed
// home, every one held by another address with connections open: thousands of addresses at once)
// is served uncounted: it counts only toward --max-connections, which is what bounds a crowd of
// addresses. The hash is keyed with a random seed per run, so no client can aim addresses at the
// part of the table its own address lives in.
class ConnectionsPerClient {
public:
    ConnectionsPerClient(AccessBlock &block, int workerSlot, int limit);

    int limit() const { return m_limit; }

    // Counts a new connection from `peer` and ties the count to `socket`'s lifetime (given back
    // when it is destroyed). False when the address already has `limit` open: the connection is
    // to be refused (and is not counted).
    bool admit(const QHostAddress &peer, QObject *socket);

    // The primary, once worker `workerSlot`'s process is gone: every count it held is given back.
    static void releaseSlot(AccessBlock &block, int workerSlot);
    // The connections `peer`'s address has open over every process (0 when it has no entry).
    static int openConnections(AccessBlock &block, const QHostAddress &peer);
    // Not capped: trusted loopback, a trusted proxy.
    static bool isExempt(const QHostAddress &peer);
    // The table's key: IPv4 and IPv4-mapped IPv6 alike, IPv6 by its /64.
    static Q_IPV6ADDR keyOf(const QHostAddress &peer);

private:
    AccessBlock &m_block;
    int m_slot;
    int m_limit;
};

} // namespace taxicore
