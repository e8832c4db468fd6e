#pragma once

// One Redis reply (RESP2), copied out of hiredis so it can outlive the connection. An Error reply
// is also what a command gets when Redis could not answer it at all (unavailable, timed out,
// queue full, client closed): `text` then starts with "redis <host:port>".

#include <QByteArray>
#include <vector>

namespace taxicore::redis {

struct RedisReply {
    enum class Type { Error, Status, String, Integer, Nil, Array };

    Type type = Type::Nil;
    QByteArray text;                  // Error, Status, String
    long long integer = 0;            // Integer
    std::vector<RedisReply> elements; // Array

    bool ok() const { return type != Type::Error; }

    static RedisReply error(QByteArray message)
    {
        RedisReply reply;
        reply.type = Type::Error;
        reply.text = std::move(message);
        return reply;
    }
};

} // namespace taxicore::redis
