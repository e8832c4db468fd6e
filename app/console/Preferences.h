#pragma once

#include <QObject>
#include <QVariant>
#include <qqmlregistration.h>

// The console's settings (QSettings: layout, last panel, benchmark form) for QML, since
// Qt.labs.settings is not packaged on Debian 12.
class Preferences : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

public:
    explicit Preferences(QObject *parent = nullptr);

    Q_INVOKABLE QVariant value(const QString &key, const QVariant &fallback = {}) const;
    Q_INVOKABLE void setValue(const QString &key, const QVariant &value);
};
