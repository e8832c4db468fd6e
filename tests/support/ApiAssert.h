#pragma once

// Qt Test assertions shared by the server tests. Include after <QTest>.

#include "HttpClient.h"

#include <QJsonValue>
#include <QTest>

// A complete response with this status.
#define TC_VERIFY_STATUS(response, expectedStatus)                                                                     \
    do {                                                                                                               \
        const auto &tcR_ = (response);                                                                                 \
        QVERIFY2(tcR_.complete, tcR_.describe().constData());                                                          \
        QVERIFY2(tcR_.status == (expectedStatus),                                                                      \
                 (QByteArray("expected status ") + QByteArray::number(expectedStatus) + ", got " + tcR_.describe())    \
                     .constData());                                                                                    \
    } while (false)

// A JSON error answer: this status, a JSON object with "error" == code and a non-empty "message".
#define TC_VERIFY_ERROR(response, expectedStatus, expectedCode)                                                        \
    do {                                                                                                               \
        const auto &tcE_ = (response);                                                                                 \
        TC_VERIFY_STATUS(tcE_, expectedStatus);                                                                        \
        QVERIFY2(tcE_.header("Content-Type").startsWith("application/json"),                                           \
                 ("Content-Type: " + tcE_.header("Content-Type")).constData());                                        \
        QVERIFY2(tcE_.isJsonObject(), tcE_.describe().constData());                                                    \
        const QJsonObject tcO_ = tcE_.json();                                                                          \
        QVERIFY2(tcO_.value(QStringLiteral("error")).isString(), tcE_.describe().constData());                         \
        QVERIFY2(!tcO_.value(QStringLiteral("message")).toString().isEmpty(), tcE_.describe().constData());            \
        if (QByteArray(expectedCode).size() > 0)                                                                       \
            QCOMPARE(tcO_.value(QStringLiteral("error")).toString(), QString::fromLatin1(expectedCode));               \
    } while (false)
