// The rider page's static routes against a real taxicore-server: / and /carbooking.html are the
// same page, with a strong ETag (304 on If-None-Match), gzip when asked, the right Content-Type
// and caching; the assets it links are served and long-lived only under their content hash.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QRegularExpression>
#include <QTest>
#include <memory>
#include <zlib.h>

using namespace taxicore::test;

namespace {

QByteArray gunzip(const QByteArray &data)
{
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return {};
    QByteArray out;
    char buffer[16384];
    z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.constData()));
    z.avail_in = uInt(data.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef *>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buffer, qsizetype(sizeof buffer - z.avail_out));
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : QByteArray();
}

} // namespace

class WebStaticTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_server = std::make_unique<ServerProcess>(QStringList{"--cars", "20"});
        QVERIFY2(m_server->start(), qPrintable(m_server->error()));
        HttpClient http(m_server->host(), m_server->port());
        QVERIFY2(http.get("/").status != 404, "no route /: registerStaticRoutes is not wired into "
                                              "the server (resources/web/README.md, Wiring)");
    }

    void cleanupTestCase()
    {
        if (m_server)
            QCOMPARE(m_server->stop(), 0);
    }

    void pageWithEtagAndPolicy()
    {
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse r = http.get("/");
        TC_VERIFY_STATUS(r, 200);
        QCOMPARE(r.header("Content-Type"), QByteArray("text/html; charset=utf-8"));
        QVERIFY(r.body.contains("<canvas"));
        QVERIFY(r.body.contains("/assets/app.js?v="));
        const QByteArray etag = r.header("ETag");
        QVERIFY2(etag.startsWith('"') && etag.endsWith('"') && etag.size() > 10,
                 etag.constData()); // strong
        QCOMPARE(r.header("Cache-Control"), QByteArray("no-cache"));
        QVERIFY(r.header("Content-Security-Policy").contains("default-src 'self'"));
        QCOMPARE(r.header("X-Content-Type-Options"), QByteArray("nosniff"));

        const HttpResponse again = http.get("/carbooking.html");
        TC_VERIFY_STATUS(again, 200);
        QCOMPARE(again.body, r.body);
        QCOMPARE(again.header("ETag"), etag);
    }

    void notModifiedOnIfNoneMatch()
    {
        HttpClient http(m_server->host(), m_server->port());
        const QByteArray etag = http.get("/").header("ETag");
        const HttpResponse r = http.request("GET", "/", {}, {{"If-None-Match", etag}});
        TC_VERIFY_STATUS(r, 304);
        QVERIFY(r.body.isEmpty());
        QCOMPARE(r.header("ETag"), etag);
        const HttpResponse listed = http.request("GET", "/carbooking.html", {}, {{"If-None-Match", "\"x\", " + etag}});
        TC_VERIFY_STATUS(listed, 304);
        const HttpResponse stale = http.request("GET", "/", {}, {{"If-None-Match", "\"stale\""}});
        TC_VERIFY_STATUS(stale, 200);
        QVERIFY(!stale.body.isEmpty());
    }

    void gzipWhenAsked()
    {
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse plain = http.get("/");
        const HttpResponse gz = http.request("GET", "/", {}, {{"Accept-Encoding", "gzip, deflate, br"}});
        TC_VERIFY_STATUS(gz, 200);
        QCOMPARE(gz.header("Content-Encoding"), QByteArray("gzip"));
        QCOMPARE(gz.header("Vary"), QByteArray("Accept-Encoding"));
        QVERIFY(gz.body.size() < plain.body.size());
        QCOMPARE(gunzip(gz.body), plain.body);
        QVERIFY2(gz.header("ETag") != plain.header("ETag"), "one strong ETag for two representations");
        const HttpResponse gz304 =
            http.request("GET", "/", {}, {{"Accept-Encoding", "gzip"}, {"If-None-Match", gz.header("ETag")}});
        TC_VERIFY_STATUS(gz304, 304);
        QVERIFY(!plain.hasHeader("Content-Encoding"));
        const HttpResponse refused = http.request("GET", "/", {}, {{"Accept-Encoding", "gzip;q=0, identity"}});
        QVERIFY(!refused.hasHeader("Content-Encoding"));
    }

    void assetsByContentHash()
    {
        HttpClient http(m_server->host(), m_server->port());
        const QByteArray page = http.get("/").body;
        const QRegularExpression link(QStringLiteral("/assets/([a-z]+\\.(js|css))\\?v=([0-9a-f]+)"));
        auto it = link.globalMatch(QString::fromUtf8(page));
        int seen = 0;
        while (it.hasNext()) {
            const auto m = it.next();
            ++seen;
            const HttpResponse r = http.get(m.captured(0).toUtf8());
            TC_VERIFY_STATUS(r, 200);
            QVERIFY(!r.body.isEmpty());
            QCOMPARE(r.header("Content-Type"), m.captured(2) == "js" ? QByteArray("text/javascript; charset=utf-8")
                                                                     : QByteArray("text/css; charset=utf-8"));
            QVERIFY2(r.header("Cache-Control").contains("immutable"), r.header("Cache-Control").constData());
            QVERIFY(r.hasHeader("ETag"));
            const HttpResponse unversioned = http.get("/assets/" + m.captured(1).toUtf8());
            QCOMPARE(unversioned.header("Cache-Control"), QByteArray("no-cache"));
            QCOMPARE(unversioned.body, r.body);
            const HttpResponse again =
                http.request("GET", m.captured(0).toUtf8(), {}, {{"If-None-Match", r.header("ETag")}});
            TC_VERIFY_STATUS(again, 304);
        }
        QVERIFY2(seen >= 3, "the page should link app.js, map.js and style.css");
        TC_VERIFY_ERROR(http.get("/assets/nothing.js"), 404, "asset_not_found");
    }

    void headHasNoBody()
    {
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse get = http.get("/");
        const HttpResponse head = http.request("HEAD", "/");
        TC_VERIFY_STATUS(head, 200);
        QVERIFY(head.body.isEmpty());
        QCOMPARE(head.header("Content-Length").toLongLong(), get.body.size());
    }

private:
    std::unique_ptr<ServerProcess> m_server;
};

QTEST_GUILESS_MAIN(WebStaticTest)
#include "web_static_test.moc"
