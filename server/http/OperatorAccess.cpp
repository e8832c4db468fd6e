#include "http/OperatorAccess.h"

#include "wire/ApiError.h"
#include "wire/AsciiText.h"
#include "wire/RequestInput.h"
#include "wire/SecretToken.h"

#include <QHostInfo>

namespace taxicore {

namespace {

OperatorAccessPolicy &policyStorage()
{
    static OperatorAccessPolicy policy;
    return policy;
}

bool allOf(QByteArrayView text, bool (*allowed)(char))
{
    for (const char c : text)
        if (!allowed(c))
            return false;
    return !text.isEmpty();
}

bool isNameChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

bool isV6Char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// "host", "host:port", "[v6]" or "[v6]:port" → the host, without brackets or one trailing dot;
// null for anything else (two Host fields that Qt's parser joined with ", ", userinfo, spaces):
// such a request is nobody's own page.
QByteArrayView hostNameOf(QByteArrayView authority)
{
    QByteArrayView name;
    QByteArrayView rest;
    if (authority.startsWith('[')) {
        const qsizetype close = authority.indexOf(']');
        if (close < 0 || !allOf(authority.sliced(1, close - 1), isV6Char))
            return {};
        name = authority.sliced(1, close - 1);
        rest = authority.sliced(close + 1);
    } else {
        const qsizetype colon = authority.indexOf(':');
        name = colon < 0 ? authority : authority.first(colon);
        rest = colon < 0 ? QByteArrayView() : authority.sliced(colon);
        if (!allOf(name, isNameChar))
            return {};
        if (name.endsWith('.'))
            name.chop(1);
    }
    if (!rest.isEmpty() && !(rest.startsWith(':') && allOf(rest.sliced(1), isDigit)))
        return {};
    return name;
}

bool isLoopbackIpv4(QByteArrayView name)
{
    if (!name.startsWith("127."))
        return false;
    for (const char c : name)
        if (c != '.' && (c < '0' || c > '9'))
            return false;
    return true;
}

// This machine's own name, as a page from elsewhere cannot make a browser send it.
const QByteArray &thisHostName()
{
    static const QByteArray name = QHostInfo::localHostName().toLower().toUtf8();
    return name;
}

bool isLocalName(QByteArrayView name)
{
    return equalsIgnoringAsciiCase(name, "localhost") || name == "::1" || isLoopbackIpv4(name)
           || (!thisHostName().isEmpty() && equalsIgnoringAsciiCase(name, thisHostName()));
}

} // namespace

void setOperatorAccessPolicy(OperatorAccessPolicy policy)
{
    policyStorage() = std::move(policy);
}

const OperatorAccessPolicy &operatorAccessPolicy()
{
    return policyStorage();
}

namespace {
// A direct loopback peer while loopback is trusted. A request a proxy forwarded is not from this
// host's loopback, even when the proxy's own client was on the proxy's loopback.
bool isLoopbackPeer(const ApiRequest &request)
{
    return operatorAccessPolicy().trustLoopback && !request.forwarded && request.remote.isLoopback();
}
} // namespace

bool isTrustedLoopback(const ApiRequest &request)
{
    return isLoopbackPeer(request) && !request.crossSite;
}

bool isCrossSite(QByteArrayView host, QByteArrayView origin)
{
    if (!host.isNull() && !isLocalName(hostNameOf(host)))
        return true;
    if (origin.isNull())
        return false;
    // "http://host[:port]" of the page (this server speaks plain HTTP); "null", another scheme
    // and anything else is another site.
    const qsizetype schemeEnd = origin.indexOf("://");
    if (schemeEnd <= 0 || !equalsIgnoringAsciiCase(origin.first(schemeEnd), "http"))
        return true;
    const QByteArrayView authority = origin.sliced(schemeEnd + 3);
    return host.isNull() ? !isLocalName(hostNameOf(authority)) : !equalsIgnoringAsciiCase(authority, host);
}

bool isAdminToken(const QByteArray &token)
{
    const QByteArray &expected = operatorAccessPolicy().adminToken;
    return !expected.isEmpty() && sameSecret(token, expected);
}

bool carriesAdminToken(const ApiRequest &request)
{
    return isAdminToken(bearerToken(request.authorization));
}

void throwUnauthorized(const char *code, const QString &message)
{
    ApiResponse response = errorResponse(401, code, message);
    response.headers.append({QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer realm=\"taxicore\"")});
    throw ApiException{std::move(response)};
}

// A loopback client that would be trusted but for its Host or Origin: 403 saying why, so that an
// operator whose tool sends an unusual Host knows what to change.
void refuseCrossSiteLoopback(const ApiRequest &request)
{
    if (request.crossSite && isLoopbackPeer(request))
        throw ApiException{errorResponse(
            403, "cross_site_request",
            QStringLiteral("a request for another host name (Host) or from another site's page (Origin) gets no "
                           "loopback trust: use localhost or 127.0.0.1, or send Authorization: Bearer <token>"))};
}

void requireOperator(const ApiRequest &request)
{
    if (!bearerToken(request.authorization).isEmpty()) {
        if (!carriesAdminToken(request))
            throwUnauthorized("invalid_admin_token", QStringLiteral("the bearer token is not the admin token"));
        return;
    }
    refuseCrossSiteLoopback(request);
    if (!isTrustedLoopback(request))
        throwUnauthorized("admin_token_required",
                          QStringLiteral("operator endpoints need Authorization: Bearer <admin token>"));
}

void requireDevice(const ApiRequest &request)
{
    const QByteArray token = bearerToken(request.authorization);
    if (!token.isEmpty()) {
        const QByteArray &device = operatorAccessPolicy().deviceToken;
        if (!carriesAdminToken(request) && !(!device.isEmpty() && sameSecret(token, device)))
            throwUnauthorized("invalid_device_token",
                              QStringLiteral("the bearer token is neither the device token nor the admin token"));
        return;
    }
    refuseCrossSiteLoopback(request);
    if (!isTrustedLoopback(request))
        throwUnauthorized("device_token_required",
                          QStringLiteral("position reports need Authorization: Bearer <device token>"));
}

} // namespace taxicore
