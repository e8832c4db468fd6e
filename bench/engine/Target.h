#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace taxicore::bench {

// Where the load goes: parsed from an http:// URL and resolved once, before the run, so the hot
// path never calls the resolver.
struct Target {
    std::string url;
    std::string host;
    uint16_t port = 80;
    std::string path = "/"; // path and query of the URL, used when no scenario names its own
    std::string hostHeader; // "host" or "host:port", as sent in the Host header
    sockaddr_storage address{};
    socklen_t addressLength = 0;

    // Parses and resolves. On failure returns nullopt and sets `error` to one clear sentence.
    static std::optional<Target> fromUrl(const std::string &url, std::string &error);

    // Opens and closes one connection within `timeout`; empty on success, else why it failed.
    std::string probe(std::chrono::milliseconds timeout) const;
};

} // namespace taxicore::bench
