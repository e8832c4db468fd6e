#pragma once

// Where a Redis server is and how to log in: parsed from `redis://[[user]:password@]host[:port][/db]`.

#include <QString>
#include <QStringView>
#include <optional>

namespace taxicore::redis {

constexpr int kRedisDefaultPort = 6379;
// Redis' default `databases 16`; a higher number is refused by SELECT, so we refuse it first.
constexpr int kRedisMaxDb = 15;

struct RedisEndpoint {
    QString host;
    int port = kRedisDefaultPort;
    int db = 0;
    QString user; // empty: AUTH with the password only (the `default` user)
    QString password;

    // "host:port" or "host:port/db": for logs and error messages, never with the password.
    QString display() const;
};

// Parses `redis://[[user]:password@]host[:port][/db]` (IPv6 hosts in brackets). On failure returns
// nothing and, if `error` is given, a message naming the part that is wrong.
std::optional<RedisEndpoint> parseRedisUrl(QStringView url, QString *error);

} // namespace taxicore::redis
