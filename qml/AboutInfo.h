#pragma once

#include <QObject>
#include <QString>
#include <QtQml/qqmlregistration.h>

// What the About box shows that QML cannot know by itself: the one TaxiCore version (the CMake
// project version, also printed by --version and served by /healthz) and the Qt it runs on.
class AboutInfo : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(QString qtVersion READ qtVersion CONSTANT)
    Q_PROPERTY(QString qtBuildVersion READ qtBuildVersion CONSTANT)

public:
    using QObject::QObject;

    static QString version();
    static QString qtVersion();      // the Qt libraries loaded at run time
    static QString qtBuildVersion(); // the Qt headers TaxiCore was compiled against
};
