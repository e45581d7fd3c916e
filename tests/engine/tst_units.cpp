#include "base/inputerror.h"
#include "base/units.h"

#include <QTest>

using namespace railyard::engine;

class TestUnits : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parseSize_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("bytes");
        QTest::newRow("seed 14GB") << "14GB" << 14e9;
        QTest::newRow("decimal MB") << "512MB" << 512e6;
        QTest::newRow("KB") << "4KB" << 4e3;
        QTest::newRow("bytes B") << "128B" << 128.0;
        QTest::newRow("bare number") << "1000" << 1000.0;
        QTest::newRow("8GiB") << "8GiB" << 8.0 * 1024 * 1024 * 1024;
        QTest::newRow("MiB") << "64MiB" << 64.0 * 1024 * 1024;
        QTest::newRow("KiB") << "512KiB" << 512.0 * 1024;
        QTest::newRow("fraction") << "1.5GB" << 1.5e9;
        QTest::newRow("space and case") << " 2 gib " << 2.0 * 1024 * 1024 * 1024;
        QTest::newRow("exponent") << "1e9" << 1e9;
        QTest::newRow("TB") << "1TB" << 1e12;
    }
    void parseSize()
    {
        QFETCH(QString, text);
        QFETCH(double, bytes);
        QCOMPARE(static_cast<double>(railyard::engine::parseSize(text.toStdString())), bytes);
    }

    void badSize_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << ""
                               << "empty";
        QTest::newRow("unit only") << "GB"
                                   << "no number";
        QTest::newRow("unknown unit") << "14 GX"
                                      << "unknown unit 'gx'";
        QTest::newRow("negative") << "-1GB"
                                  << "no number";
        QTest::newRow("absurd") << "5000TB"
                                << "larger than 1 PB";
        QTest::newRow("garbage number") << "1.2.3GB"
                                        << "is not a number";
    }
    void badSize()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        try {
            railyard::engine::parseSize(text.toStdString());
            QFAIL("no error");
        } catch (const InputError &e) {
            const QString msg = QString::fromStdString(e.what());
            QVERIFY2(msg.contains(expected), qPrintable(msg));
            QVERIFY2(msg.contains(QStringLiteral("expected a number with an optional unit")),
                     qPrintable(msg));
        }
    }

    void indexList()
    {
        QCOMPARE(parseIndexList("0-3,16", 32), (std::vector<int>{0, 1, 2, 3, 16}));
        QCOMPARE(parseIndexList("7", 8), (std::vector<int>{7}));
        QVERIFY_THROWS_EXCEPTION(InputError, parseIndexList("0-8", 8));
        QVERIFY_THROWS_EXCEPTION(InputError, parseIndexList("3-1", 8));
        QVERIFY_THROWS_EXCEPTION(InputError, parseIndexList("1,1", 8));
        QVERIFY_THROWS_EXCEPTION(InputError, parseIndexList("a", 8));
        QVERIFY_THROWS_EXCEPTION(InputError, parseIndexList("", 8));
    }

    void formatting()
    {
        QCOMPARE(QString::fromStdString(formatBytes(14e9)), QStringLiteral("14 GB"));
        QCOMPARE(QString::fromStdString(formatBytes(8.0 * (1 << 30))), QStringLiteral("8 GiB"));
        QCOMPARE(QString::fromStdString(formatSeconds(0.0681)), QStringLiteral("68.1 ms"));
        QCOMPARE(QString::fromStdString(formatSeconds(12.3)), QStringLiteral("12.3 s"));
    }
};

QTEST_APPLESS_MAIN(TestUnits)
#include "tst_units.moc"
