#include "http/OperatorAccess.h"

#include "wire/ApiError.h"
#include "wire/RequestInput.h"
#include "wire/SecretToken.h"

namespace taxicore {

namespace {

OperatorAccessPolicy &policyStorage()
{
    static OperatorAccessPolicy policy;
    return policy;
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

bool isTrustedLoopback(const ApiRequest &request)
{
    // A request a proxy forwarded is not from this host's loopback, even when the proxy's own
    // client was on the proxy's loopback: only a direct loopback peer is trusted.
    return operatorAccessPolicy().trustLoopback && !request.forwarded && request.remote.isLoopback();
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

void requireOperator(const ApiRequest &request)
{
    if (!bearerToken(request.authorization).isEmpty()) {
        if (!carriesAdminToken(request))
            throwUnauthorized("invalid_admin_token", QStringLiteral("the bearer token is not the admin token"));
        return;
    }
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
    if (!isTrustedLoopback(request))
        throwUnauthorized("device_token_required",
                          QStringLiteral("position reports need Authorization: Bearer <device token>"));
}

} // namespace taxicore
