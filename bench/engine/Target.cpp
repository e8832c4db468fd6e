#include "Target.h"

#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace taxicore::bench {

namespace {

constexpr std::string_view kScheme = "http://";

bool parsePort(std::string_view text, uint16_t &port)
{
    unsigned value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value == 0 || value > 65535)
        return false;
    port = static_cast<uint16_t>(value);
    return true;
}

} // namespace

std::optional<Target> Target::fromUrl(const std::string &url, std::string &error)
{
    std::string_view rest(url);
    if (rest.substr(0, 8) == "https://") {
        error = "https is not supported: use an http:// URL";
        return std::nullopt;
    }
    if (rest.substr(0, kScheme.size()) != kScheme) {
        error = "bad URL '" + url + "': expected http://HOST[:PORT][/PATH]";
        return std::nullopt;
    }
    rest.remove_prefix(kScheme.size());
    Target target;
    target.url = url;
    const std::size_t slash = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        target.path = std::string(rest.substr(slash));
        if (target.path.front() == '?')
            target.path.insert(0, "/");
    }
    std::string_view host = authority;
    if (!authority.empty() && authority.front() == '[') { // [::1]:8080
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            error = "bad URL '" + url + "': unterminated IPv6 address";
            return std::nullopt;
        }
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty() && (after.front() != ':' || !parsePort(after.substr(1), target.port))) {
            error = "bad URL '" + url + "': invalid port";
            return std::nullopt;
        }
    } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        if (!parsePort(authority.substr(colon + 1), target.port)) {
            error = "bad URL '" + url + "': invalid port";
            return std::nullopt;
        }
    }
    if (host.empty()) {
        error = "bad URL '" + url + "': no host";
        return std::nullopt;
    }
    target.host = std::string(host);
    target.hostHeader = std::string(authority);

    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    const std::string service = std::to_string(target.port);
    if (const int rc = getaddrinfo(target.host.c_str(), service.c_str(), &hints, &found); rc != 0) {
        error = "cannot resolve host '" + target.host + "': " + gai_strerror(rc);
        return std::nullopt;
    }
    std::memcpy(&target.address, found->ai_addr, found->ai_addrlen);
    target.addressLength = found->ai_addrlen;
    freeaddrinfo(found);
    return target;
}

std::string Target::probe(std::chrono::milliseconds timeout) const
{
    const std::string where = host + ":" + std::to_string(port);
    const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return std::string("cannot create a socket: ") + std::strerror(errno);
    std::string failure;
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&address), addressLength) != 0) {
        if (errno != EINPROGRESS) {
            failure = "cannot connect to " + where + ": " + std::strerror(errno);
        } else {
            pollfd waiter{fd, POLLOUT, 0};
            const int ready = ::poll(&waiter, 1, static_cast<int>(timeout.count()));
            int soError = 0;
            socklen_t length = sizeof soError;
            if (ready == 0)
                failure = "cannot connect to " + where + ": timed out after " + std::to_string(timeout.count()) + " ms";
            else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) != 0)
                failure = "cannot connect to " + where + ": " + std::strerror(errno);
            else if (soError != 0)
                failure = "cannot connect to " + where + ": " + std::strerror(soError);
        }
    }
    ::close(fd);
    return failure;
}

} // namespace taxicore::bench
