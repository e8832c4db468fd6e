#include "http/StaticAssets.h"

#include "wire/ApiError.h"
#include "wire/ContentNegotiation.h"
#include "wire/GzipBody.h"
#include "http/RouteTable.h"

#include <QCryptographicHash>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <memory>

namespace taxicore {

namespace {

// Where web-assets.cmake puts resources/web/* in the binary.
constexpr const char *kResourceDir = ":/taxicore/web";
constexpr const char *kIndexFile = "index.html";
// Bodies smaller than this are not worth a gzip header.
constexpr qsizetype kMinGzipBytes = 512;

// Nothing the page loads may come from elsewhere (issue 7: no request leaves the origin).
const QByteArray kPagePolicy =
    QByteArrayLiteral("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' "
                      "data:; connect-src 'self'; "
                      "base-uri 'none'; form-action 'self'; frame-ancestors 'none'");

struct Asset {
    QByteArray contentType;
    QByteArray plain;
    QByteArray gzipped;  // empty when not worth it
    QByteArray etag;     // of the plain body: "<hash>"
    QByteArray gzipEtag; // of the gzip body: "<hash>.gz" (a strong ETag names one representation)
    QByteArray version;  // short content hash, the ?v= the page links this asset with
    bool isPage = false;
};

QByteArray contentTypeFor(const QString &name)
{
    const QString suffix = QFileInfo(name).suffix().toLower();
    if (suffix == QLatin1String("html"))
        return QByteArrayLiteral("text/html; charset=utf-8");
    if (suffix == QLatin1String("js") || suffix == QLatin1String("mjs"))
        return QByteArrayLiteral("text/javascript; charset=utf-8");
    if (suffix == QLatin1String("css"))
        return QByteArrayLiteral("text/css; charset=utf-8");
    if (suffix == QLatin1String("svg"))
        return QByteArrayLiteral("image/svg+xml");
    if (suffix == QLatin1String("png"))
        return QByteArrayLiteral("image/png");
    if (suffix == QLatin1String("ico"))
        return QByteArrayLiteral("image/x-icon");
    if (suffix == QLatin1String("json") || suffix == QLatin1String("webmanifest"))
        return QByteArrayLiteral("application/json");
    if (suffix == QLatin1String("txt") || suffix == QLatin1String("md"))
        return QByteArrayLiteral("text/plain; charset=utf-8");
    return QByteArrayLiteral("application/octet-stream");
}

bool compressible(const QByteArray &contentType)
{
    return contentType.startsWith("text/") || contentType.startsWith("application/json")
           || contentType.startsWith("image/svg");
}

std::shared_ptr<Asset> makeAsset(const QString &name, QByteArray body)
{
    auto asset = std::make_shared<Asset>();
    asset->contentType = contentTypeFor(name);
    asset->isPage = name == QLatin1String(kIndexFile);
    const QByteArray hash = QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex();
    asset->version = hash.left(12);
    asset->etag = '"' + hash.left(24) + '"';
    asset->gzipEtag = '"' + hash.left(24) + ".gz\"";
    if (compressible(asset->contentType) && body.size() >= kMinGzipBytes) {
        QByteArray gz = gzipCompress(body);
        if (!gz.isEmpty() && gz.size() < body.size())
            asset->gzipped = std::move(gz);
    }
    asset->plain = std::move(body);
    return asset;
}

ApiResponse serve(const Asset &asset, const ApiRequest &request)
{
    ApiResponse r;
    r.contentType = asset.contentType;
    const bool gzip = !asset.gzipped.isEmpty() && acceptsGzip(request.acceptEncoding);
    const QByteArray &etag = gzip ? asset.gzipEtag : asset.etag;
    r.headers.append({QByteArrayLiteral("ETag"), etag});
    // The page is revalidated on every visit (a 304 costs one round trip); the assets it links
    // carry their content hash in the URL, so they may be kept for a year when asked by it.
    const bool versioned =
        !asset.isPage && request.query.queryItemValue(QStringLiteral("v")).toLatin1() == asset.version;
    r.headers.append({QByteArrayLiteral("Cache-Control"), versioned
                                                              ? QByteArrayLiteral("public, max-age=31536000, immutable")
                                                              : QByteArrayLiteral("no-cache")});
    if (!asset.gzipped.isEmpty())
        r.headers.append({QByteArrayLiteral("Vary"), QByteArrayLiteral("Accept-Encoding")});
    r.headers.append({QByteArrayLiteral("X-Content-Type-Options"), QByteArrayLiteral("nosniff")});
    if (asset.isPage) {
        r.headers.append({QByteArrayLiteral("Content-Security-Policy"), kPagePolicy});
        r.headers.append({QByteArrayLiteral("Referrer-Policy"), QByteArrayLiteral("no-referrer")});
    }
    if (matchesEtag(request.ifNoneMatch, etag)) {
        r.status = 304;
        return r;
    }
    if (gzip) {
        r.body = asset.gzipped;
        r.headers.append({QByteArrayLiteral("Content-Encoding"), QByteArrayLiteral("gzip")});
    } else {
        r.body = asset.plain;
    }
    return r;
}

} // namespace

void registerStaticRoutes(RouteTable &router)
{
    // Read, hashed and compressed once; every request shares these bytes.
    auto assets = std::make_shared<QHash<QByteArray, std::shared_ptr<Asset>>>();
    QByteArray indexSource;
    QDirIterator it(QString::fromLatin1(kResourceDir), QDir::Files);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QString name = QFileInfo(path).fileName();
        if (name == QLatin1String(kIndexFile))
            indexSource = file.readAll();
        else
            assets->insert(name.toUtf8(), makeAsset(name, file.readAll()));
    }
    // The page links each asset as /assets/NAME; pin it to this build's content:
    // /assets/NAME?v=HASH.
    for (auto a = assets->cbegin(); a != assets->cend(); ++a)
        indexSource.replace("/assets/" + a.key() + '"', "/assets/" + a.key() + "?v=" + a.value()->version + '"');
    std::shared_ptr<Asset> page;
    if (!indexSource.isEmpty())
        page = makeAsset(QString::fromLatin1(kIndexFile), indexSource);

    const auto servePage = [page](const ApiRequest &request) {
        if (!page)
            return errorResponse(503, "web_page_missing", QStringLiteral("this build has no rider page"));
        return serve(*page, request);
    };
    router.add(HttpMethod::Get, "/", servePage);
    router.add(HttpMethod::Get, "/carbooking.html", servePage);
    router.add(HttpMethod::Get, "/assets/{file}", [assets](const ApiRequest &request) {
        const auto found = assets->constFind(request.params.value(0));
        if (found == assets->constEnd())
            return errorResponse(404, "asset_not_found",
                                 QStringLiteral("no such asset: %1").arg(QString::fromUtf8(request.params.value(0))));
        return serve(**found, request);
    });
}

} // namespace taxicore
