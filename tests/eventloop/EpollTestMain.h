#pragma once

// main() of an eventloop test: the main thread runs on EpollEventDispatcher, installed before the
// application object exists, so QTest::qWait, QSignalSpy::wait and every QTRY_ go through it.

#include "eventloop/EpollEventDispatcher.h"

#include <QCoreApplication>
#include <QTest>

#define TAXICORE_EPOLL_TEST_MAIN(TestClass)                                                                            \
    int main(int argc, char *argv[])                                                                                   \
    {                                                                                                                  \
        QCoreApplication::setEventDispatcher(new taxicore::EpollEventDispatcher);                                      \
        QCoreApplication app(argc, argv);                                                                              \
        TestClass test;                                                                                                \
        return QTest::qExec(&test, argc, argv);                                                                        \
    }

namespace taxicore::test {

inline EpollEventDispatcher *epollDispatcher()
{
    return qobject_cast<EpollEventDispatcher *>(QAbstractEventDispatcher::instance());
}

} // namespace taxicore::test
