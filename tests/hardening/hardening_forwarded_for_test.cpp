// Who the client is behind trusted proxies (http/ClientAddress.h), in-process: the rightmost
// X-Forwarded-For entry not inside a --trusted-proxy range, the leftmost when all are; the header
// ignored from any other peer; the entry forms proxies write; what counts as malformed; the
// --trusted-proxy values accepted. The end-to-end behaviour behind a real nginx is
// hardening_trusted_proxy_test.

#include "http/ClientAddress.h"

#include <QTest>

using taxicore::ClientAddress;
using taxicore::resolveClientAddress;
using taxicore::TrustedProxies;

namespace {

TrustedProxies proxies(const QString &ranges)
{
    TrustedProxies out;
    QString error;
    if (!out.add(ranges, error))
        qFatal("%s", qPrintable(error));
    return out;
}

} // namespace

class ForwardedForTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void clientIsTheRightmostUntrustedEntry_data()
    {
        QTest::addColumn<QString>("peer");
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("client"); // empty: malformed
        QTest::addColumn<bool>("forwarded");
        // Trusted: 127.0.0.1/32, 10.0.0.0/8, fd00::/8. An empty client: malformed.
        const auto row = [](const char *name, const char *peer, const char *header, const char *client,
                            bool forwarded) {
            QTest::newRow(name) << QString::fromLatin1(peer) << QByteArray(header) << QString::fromLatin1(client)
                                << forwarded;
        };
        row("one hop", "127.0.0.1", "203.0.113.5", "203.0.113.5", true);
        row("claims left of the client are never read", "127.0.0.1", "garbage, 1.1.1.1, 203.0.113.5", "203.0.113.5",
            true);
        row("trusted hops skipped", "127.0.0.1", "198.51.100.7, 10.1.2.3, 127.0.0.1", "198.51.100.7", true);
        row("all trusted: the leftmost", "10.0.0.1", "127.0.0.1,10.9.9.9", "127.0.0.1", true);
        row("IPv6 bare", "fd00::1", "2001:db8::1", "2001:db8::1", true);
        row("IPv6 bracketed with port", "127.0.0.1", "[2001:db8::2]:443", "2001:db8::2", true);
        row("IPv4 with port", "127.0.0.1", " 198.51.100.9:5678 ", "198.51.100.9", true);
        row("IPv4-mapped peer is IPv4", "::ffff:127.0.0.1", "203.0.113.6", "203.0.113.6", true);
        row("IPv4-mapped entry is IPv4 (trusted)", "127.0.0.1", "203.0.113.8, ::ffff:10.0.0.4", "203.0.113.8", true);
        row("untrusted peer: header ignored", "192.0.2.1", "203.0.113.5", "192.0.2.1", false);
        row("untrusted peer: garbage ignored", "192.0.2.1", "???", "192.0.2.1", false);
        row("trusted peer, no header: the peer", "127.0.0.1", nullptr, "127.0.0.1", false);
        row("malformed empty header", "127.0.0.1", "", "", false);
        row("malformed blank header", "127.0.0.1", " ", "", false);
        row("untrusted peer: empty header ignored", "192.0.2.1", "", "192.0.2.1", false);
        row("malformed word", "127.0.0.1", "unknown", "", false);
        row("malformed empty entry", "127.0.0.1", "203.0.113.5,", "", false);
        row("malformed leading comma, all trusted", "127.0.0.1", ",10.0.0.2", "", false);
        row("malformed five octets", "127.0.0.1", "1.2.3.4.5", "", false);
        row("malformed port", "127.0.0.1", "1.2.3.4:http", "", false);
        row("malformed bracket", "127.0.0.1", "[2001:db8::1", "", false);
        row("malformed IPv4 in brackets", "127.0.0.1", "[1.2.3.4]", "", false);
        // IPv4 is four decimal octets (RFC 3986 dec-octet), not inet_aton's shorthands: these
        // would each be read as another address than the one written.
        row("malformed three octets", "127.0.0.1", "1.2.3", "", false);
        row("malformed three octets with port", "127.0.0.1", "1.2.3:80", "", false);
        row("malformed one number", "127.0.0.1", "16909060", "", false);
        row("malformed leading zero (octal)", "127.0.0.1", "010.1.2.3", "", false);
        row("malformed hexadecimal", "127.0.0.1", "0x0a.0.0.1", "", false);
        row("malformed octet over 255", "127.0.0.1", "1.2.3.256", "", false);
        row("malformed long octet", "127.0.0.1", "1.2.3.12345678901234", "", false);
        row("zero octets are fine", "127.0.0.1", "0.0.0.0", "0.0.0.0", true);
    }
    void clientIsTheRightmostUntrustedEntry()
    {
        QFETCH(QString, peer);
        QFETCH(QByteArray, header);
        QFETCH(QString, client);
        QFETCH(bool, forwarded);
        const ClientAddress got = resolveClientAddress(QHostAddress(peer), header,
                                                       proxies(QStringLiteral("127.0.0.1/32, 10.0.0.0/8,fd00::/8")));
        QCOMPARE(got.malformed, client.isEmpty());
        if (client.isEmpty()) {
            QCOMPARE(got.address, QHostAddress(peer)); // the peer, never a guess
            return;
        }
        QCOMPARE(got.address, QHostAddress(client));
        QCOMPARE(got.forwarded, forwarded);
    }

    void noRangesMeansNoProxy()
    {
        const ClientAddress got = resolveClientAddress(QHostAddress::LocalHost, "203.0.113.5", TrustedProxies());
        QCOMPARE(got.address, QHostAddress(QHostAddress::LocalHost));
        QVERIFY(!got.forwarded);
    }

    void trustedProxyValues()
    {
        TrustedProxies accepted;
        QString error;
        QVERIFY2(accepted.add(QStringLiteral("127.0.0.1"), error), qPrintable(error));
        QVERIFY2(accepted.add(QStringLiteral("10.1.2.3/8, ::1/128"), error), qPrintable(error));
        QCOMPARE(accepted.toStrings(), (QStringList{QStringLiteral("127.0.0.1/32"), QStringLiteral("10.0.0.0/8"),
                                                    QStringLiteral("::1/128")}));
        for (const QString &bad : {QStringLiteral(""), QStringLiteral("10.0.0.0/33"), QStringLiteral("localhost"),
                                   QStringLiteral("127.0.0.1,"), QStringLiteral("fe80::1%lo")}) {
            TrustedProxies refused;
            QVERIFY2(!refused.add(bad, error), qPrintable(bad));
            QVERIFY2(error.contains(QStringLiteral("--trusted-proxy")), qPrintable(error));
        }
    }
};

QTEST_GUILESS_MAIN(ForwardedForTest)
#include "hardening_forwarded_for_test.moc"
