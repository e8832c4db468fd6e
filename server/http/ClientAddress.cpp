#include "http/ClientAddress.h"

namespace taxicore {

namespace {

TrustedProxies &proxyStorage()
{
    static TrustedProxies proxies;
    return proxies;
}

// IPv4 as four decimal octets, 0–255, without leading zeros (RFC 3986 dec-octet). QHostAddress
// also takes inet_aton's forms (1.2.3, 16909060, 010.1.2.3 octal, 0x0a.0.0.1), each of which means
// another address than a reader of the log would think: an entry in such a form is malformed.
bool isDottedQuad(QByteArrayView text)
{
    int octets = 0;
    while (true) {
        qsizetype digits = 0;
        int value = 0;
        while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
            if (digits == 3)
                return false; // a fourth digit: no octet, and no overflow reading on
            value = value * 10 + (text[digits] - '0');
            ++digits;
        }
        if (digits == 0 || value > 255 || (digits > 1 && text[0] == '0'))
            return false;
        ++octets;
        text = text.sliced(digits);
        if (text.isEmpty())
            return octets == 4;
        if (text[0] != '.' || octets == 4)
            return false;
        text = text.sliced(1);
    }
}

// One X-Forwarded-For entry: `1.2.3.4`, `2001:db8::1` (nginx writes IPv6 bare), and the forms
// other proxies use, `1.2.3.4:5678`, `[2001:db8::1]` and `[2001:db8::1]:443`. Null when none.
QHostAddress parseEntry(QByteArrayView entry)
{
    entry = entry.trimmed();
    if (entry.isEmpty())
        return {};
    const auto parse = [](QByteArrayView text) {
        QHostAddress address;
        return address.setAddress(QString::fromLatin1(text)) ? plainAddress(address) : QHostAddress();
    };
    const auto isPort = [](QByteArrayView text) {
        if (text.isEmpty() || text.size() > 5)
            return false;
        for (const char c : text)
            if (c < '0' || c > '9')
                return false;
        return true;
    };
    if (entry.front() == '[') {
        const qsizetype close = entry.indexOf(']');
        if (close < 0)
            return {};
        const QByteArrayView rest = entry.sliced(close + 1);
        if (!rest.isEmpty() && !(rest.front() == ':' && isPort(rest.sliced(1))))
            return {};
        const QHostAddress address = parse(entry.sliced(1, close - 1));
        return address.protocol() == QAbstractSocket::IPv6Protocol ? address : QHostAddress();
    }
    const qsizetype colon = entry.indexOf(':');
    if (colon >= 0 && entry.lastIndexOf(':') == colon) { // one colon: IPv4 with a port
        if (!isPort(entry.sliced(colon + 1)))
            return {};
        return isDottedQuad(entry.first(colon)) ? parse(entry.first(colon)) : QHostAddress();
    }
    if (colon < 0 && !isDottedQuad(entry))
        return {};
    return parse(entry);
}

} // namespace

bool TrustedProxies::add(const QString &value, QString &error)
{
    for (const QString &part : value.split(QLatin1Char(','))) {
        const QString entry = part.trimmed();
        const QPair<QHostAddress, int> subnet = QHostAddress::parseSubnet(entry);
        if (entry.isEmpty() || subnet.second < 0 || !subnet.first.scopeId().isEmpty()) {
            error = QStringLiteral("--trusted-proxy must be addresses or CIDR ranges (127.0.0.1/32, 10.0.0.0/8, "
                                   "::1/128), comma-separated, not \"%1\"")
                        .arg(entry);
            return false;
        }
        if (!m_subnets.contains(subnet))
            m_subnets.append(subnet);
    }
    return true;
}

bool TrustedProxies::contains(const QHostAddress &address) const
{
    const QHostAddress plain = plainAddress(address);
    for (const auto &subnet : m_subnets)
        if (plain.isInSubnet(subnet.first, subnet.second))
            return true;
    return false;
}

QStringList TrustedProxies::toStrings() const
{
    QStringList out;
    for (const auto &subnet : m_subnets)
        out << QStringLiteral("%1/%2").arg(subnet.first.toString()).arg(subnet.second);
    return out;
}

void setTrustedProxies(TrustedProxies proxies)
{
    proxyStorage() = std::move(proxies);
}

const TrustedProxies &trustedProxies()
{
    return proxyStorage();
}

QHostAddress plainAddress(const QHostAddress &address)
{
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        bool mapped = false;
        const quint32 v4 = address.toIPv4Address(&mapped);
        if (mapped)
            return QHostAddress(v4);
    }
    return address;
}

ClientAddress resolveClientAddress(const QHostAddress &peer, const QByteArray &forwardedFor,
                                   const TrustedProxies &proxies)
{
    ClientAddress client{peer};
    // Null: no such field. An empty one goes on, and is malformed: it names no client, and read
    // as none it made the proxy's request the proxy's own (trusted loopback for a local proxy).
    if (forwardedFor.isNull() || proxies.isEmpty() || !proxies.contains(peer))
        return client;
    // From the right: the nearest hop first, stopping at the first address no trusted proxy has.
    QHostAddress leftmost;
    qsizetype end = forwardedFor.size();
    for (;;) {
        // (lastIndexOf from -1 would search from the end again: an empty first entry is just empty.)
        const qsizetype comma = end > 0 ? forwardedFor.lastIndexOf(',', end - 1) : -1;
        const QHostAddress entry = parseEntry(QByteArrayView(forwardedFor).sliced(comma + 1, end - comma - 1));
        if (entry.isNull()) {
            client.malformed = true;
            return client;
        }
        if (!proxies.contains(entry)) {
            client.address = entry;
            client.forwarded = true;
            return client;
        }
        leftmost = entry;
        if (comma < 0)
            break;
        end = comma;
    }
    client.address = leftmost;
    client.forwarded = true;
    return client;
}

} // namespace taxicore
