#pragma once

// How the Pricing docks (training and serving) write their numbers in table cells.

#include "base/units.h"

#include <QLocale>
#include <QObject>
#include <QString>

namespace railyard::pricingformat {

// "12.4 ms", "1.92 s".
inline QString seconds(double s)
{
    return QString::fromStdString(engine::formatSeconds(s));
}

inline QString number(double v, int decimals = 0)
{
    return QLocale().toString(v, 'f', decimals);
}

// Large counts in three figures ("1.82 M", "112 k", "95.6 k"); below 10,000 with
// `smallDecimals` decimals.
inline QString compact(double v, int smallDecimals = 0)
{
    if (v >= 1e6)
        return QObject::tr("%1 M").arg(QLocale().toString(v / 1e6, 'f', v < 1e7 ? 2 : 1));
    if (v >= 1e4)
        return QObject::tr("%1 k").arg(QLocale().toString(v / 1e3, 'f', v < 1e5 ? 1 : 0));
    return number(v, smallDecimals);
}

} // namespace railyard::pricingformat
