#include "http/WorkloadApi.h"

#include "wire/ApiError.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"

#include <QJsonObject>
#include <cmath>

namespace taxicore {

namespace {
constexpr int kMaxFib = 45;
constexpr long kCpuLoopIterations = 2'097'152; // 8^7, as in the cluster article
} // namespace

unsigned long long fibonacci(int n)
{
    // Deliberately naive: the point is to burn CPU the way the seed servers did.
    return n < 2 ? static_cast<unsigned long long>(n) : fibonacci(n - 1) + fibonacci(n - 2);
}

double cpuLoop()
{
    // The exponent comes through a volatile so the compiler cannot fold pow() away.
    volatile double exponent = 7;
    double total = 0;
    for (long i = 0; i < kCpuLoopIterations; ++i)
        total += std::pow(double(i), exponent);
    return total;
}

void registerWorkloadRoutes(RouteTable &router)
{
    router.addInline(HttpMethod::Get, "/hello",
                     [](const ApiRequest &) { return textResponse(QByteArrayLiteral("Hello World\n")); });
    router.add(HttpMethod::Get, "/fib", [](const ApiRequest &request) {
        const char *name =
            request.query.hasQueryItem(QStringLiteral("num")) && !request.query.hasQueryItem(QStringLiteral("n"))
                ? "num"
                : "n";
        const int n = int(queryNumber(request, name, 0, kMaxFib));
        if (double(n) != request.query.queryItemValue(QString::fromLatin1(name)).toDouble())
            throwApiError(400, "not_an_integer",
                          QStringLiteral("%1 must be a whole number").arg(QLatin1StringView(name)));
        return jsonResponse({{QStringLiteral("n"), n}, {QStringLiteral("fib"), qint64(fibonacci(n))}});
    });
    router.add(HttpMethod::Get, "/cpu", [](const ApiRequest &) {
        return jsonResponse(
            {{QStringLiteral("iterations"), qint64(kCpuLoopIterations)}, {QStringLiteral("result"), cpuLoop()}});
    });
}

} // namespace taxicore
