#include "Preferences.h"

#include <QSettings>

Preferences::Preferences(QObject *parent)
    : QObject(parent)
{
}

QVariant Preferences::value(const QString &key, const QVariant &fallback) const
{
    return QSettings().value(key, fallback);
}

void Preferences::setValue(const QString &key, const QVariant &value)
{
    QSettings().setValue(key, value);
}
