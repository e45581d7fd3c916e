#pragma once
// Tolerance comparisons that say what they compared (LabPlot's CommonTest.h is the model):
//
//   RAILYARD_COMPARE_NEAR(actual, expected, relTol)  |actual - expected| <= relTol * |expected|
//   RAILYARD_COMPARE_ABS(actual, expected, absTol)   |actual - expected| <= absTol
//
// On failure both values, the error and the tolerance are printed, so a failing run tells how far
// off a number is, not only that it is. An expected value of 0 with NEAR compares absolutely
// against relTol (there is no relative error to 0). NaN never compares near anything.

#include <QString>
#include <QTest>

#include <cmath>

namespace railyard::test {

inline bool nearRel(double actual, double expected, double relTol)
{
    if (!std::isfinite(actual) || !std::isfinite(expected))
        return actual == expected; // inf == inf; NaN never
    const double scale = expected == 0 ? 1.0 : std::abs(expected);
    return std::abs(actual - expected) <= relTol * scale;
}

inline bool nearAbs(double actual, double expected, double absTol)
{
    if (!std::isfinite(actual) || !std::isfinite(expected))
        return actual == expected;
    return std::abs(actual - expected) <= absTol;
}

inline QByteArray describeNear(const char *actualText,
                               const char *expectedText,
                               double actual,
                               double expected,
                               double tol,
                               bool relative)
{
    const double diff = actual - expected;
    QString s = QStringLiteral("%1 = %2, %3 = %4: ")
                        .arg(QLatin1String(actualText))
                        .arg(actual, 0, 'g', 10)
                        .arg(QLatin1String(expectedText))
                        .arg(expected, 0, 'g', 10);
    if (relative && expected != 0)
        s += QStringLiteral("off by %1%, tolerance %2%")
                     .arg(100 * diff / std::abs(expected), 0, 'g', 4)
                     .arg(100 * tol, 0, 'g', 4);
    else
        s += QStringLiteral("off by %1, tolerance %2").arg(diff, 0, 'g', 6).arg(tol, 0, 'g', 6);
    return s.toUtf8();
}

} // namespace railyard::test

#define RAILYARD_COMPARE_NEAR(actual, expected, relTol) \
    do { \
        const double railyard_a_ = double(actual); \
        const double railyard_e_ = double(expected); \
        const double railyard_t_ = double(relTol); \
        if (!::railyard::test::nearRel(railyard_a_, railyard_e_, railyard_t_)) \
            QFAIL(::railyard::test::describeNear(#actual, \
                                                 #expected, \
                                                 railyard_a_, \
                                                 railyard_e_, \
                                                 railyard_t_, \
                                                 true) \
                          .constData()); \
    } while (false)

#define RAILYARD_COMPARE_ABS(actual, expected, absTol) \
    do { \
        const double railyard_a_ = double(actual); \
        const double railyard_e_ = double(expected); \
        const double railyard_t_ = double(absTol); \
        if (!::railyard::test::nearAbs(railyard_a_, railyard_e_, railyard_t_)) \
            QFAIL(::railyard::test::describeNear(#actual, \
                                                 #expected, \
                                                 railyard_a_, \
                                                 railyard_e_, \
                                                 railyard_t_, \
                                                 false) \
                          .constData()); \
    } while (false)
