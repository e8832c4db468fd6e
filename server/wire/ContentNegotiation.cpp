#include "wire/ContentNegotiation.h"

#include "wire/AsciiText.h"

namespace taxicore {

namespace {

// The weight of one Accept-Encoding entry's parameters (";q=0.5"): 1 when none is given, -1 when
// it cannot be read (qvalue = "0" ["." 0–3 digits] / "1" ["." 0–3 zeros]).
double weightOf(QByteArrayView parameters)
{
    double weight = 1.0;
    while (!parameters.isEmpty()) {
        const qsizetype next = parameters.indexOf(';', 1);
        const QByteArrayView parameter =
            trimmedOfOptionalWhitespace(parameters.sliced(1, (next < 0 ? parameters.size() : next) - 1));
        parameters = next < 0 ? QByteArrayView() : parameters.sliced(next);
        const qsizetype equals = parameter.indexOf('=');
        if (equals < 0 || !equalsIgnoringAsciiCase(trimmedOfOptionalWhitespace(parameter.first(equals)), "q"))
            continue;
        const QByteArrayView value = trimmedOfOptionalWhitespace(parameter.sliced(equals + 1));
        if (value.isEmpty() || value.size() > 5 || (value[0] != '0' && value[0] != '1'))
            return -1;
        if (value.size() > 1 && value[1] != '.')
            return -1;
        double fraction = 0;
        double scale = 0.1;
        for (qsizetype i = 2; i < value.size(); ++i, scale /= 10) {
            if (value[i] < '0' || value[i] > '9')
                return -1;
            fraction += (value[i] - '0') * scale;
        }
        if (value[0] == '1' && fraction > 0)
            return -1;
        weight = (value[0] - '0') + fraction;
    }
    return weight;
}

} // namespace

bool acceptsGzip(QByteArrayView field)
{
    double gzip = -1;     // the weight "gzip" was given, -1 while not named
    double wildcard = -1; // the weight "*" was given
    while (!field.isEmpty()) {
        const qsizetype comma = field.indexOf(',');
        const QByteArrayView entry = field.first(comma < 0 ? field.size() : comma);
        field = comma < 0 ? QByteArrayView() : field.sliced(comma + 1);
        const qsizetype semicolon = entry.indexOf(';');
        const QByteArrayView name = trimmedOfOptionalWhitespace(semicolon < 0 ? entry : entry.first(semicolon));
        const double weight = semicolon < 0 ? 1.0 : weightOf(entry.sliced(semicolon));
        if (equalsIgnoringAsciiCase(name, "gzip") || equalsIgnoringAsciiCase(name, "x-gzip"))
            gzip = weight < 0 ? gzip : weight;
        else if (name == "*")
            wildcard = weight < 0 ? wildcard : weight;
    }
    return gzip >= 0 ? gzip > 0 : wildcard > 0;
}

bool matchesEtag(QByteArrayView field, QByteArrayView etag)
{
    if (trimmedOfOptionalWhitespace(field) == "*")
        return true;
    while (!field.isEmpty()) {
        const qsizetype comma = field.indexOf(',');
        QByteArrayView candidate = trimmedOfOptionalWhitespace(field.first(comma < 0 ? field.size() : comma));
        field = comma < 0 ? QByteArrayView() : field.sliced(comma + 1);
        if (candidate.startsWith("W/"))
            candidate = candidate.sliced(2);
        if (!candidate.isEmpty() && candidate == etag)
            return true;
    }
    return false;
}

} // namespace taxicore
