// `railyard export FILE -o OUT --region PART`: a part of a large cluster at full detail.
#include "exportcheck.h"

#include "clirun.h"

#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

using railyard::test::inkPixels;
using railyard::test::runTool;
using railyard::test::xmlText;

class TestExportRegion : public QObject
{
    Q_OBJECT

    struct Run
    {
        int exitCode;
        QString out;
        QString err;
    };

    QTemporaryDir m_dir;

    static Run run(const QStringList &args)
    {
        const railyard::test::CliRun r = railyard::test::runCli(
                QStringList{QStringLiteral("export")} + args);
        return {r.exitCode, r.outText(), r.errText()};
    }
    QString out(const char *name) const { return m_dir.filePath(QLatin1String(name)); }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // --region: a part of the 16,384-GPU cluster at full detail (its GPUs named), the title
    // block saying which part; an index the cluster lacks is an error naming what it has.
    void regionDrawsAPart()
    {
        const QString layout = QStringLiteral(RAILYARD_SOURCE_DIR
                                              "/layouts/llama3.1-405b-16k-h100.railyard.json");
        Run r = run({layout,
                     QStringLiteral("-o"),
                     out("rack1.svg"),
                     QStringLiteral("--region"),
                     QStringLiteral("rack:1")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QString error;
        const QStringList lines = xmlText(out("rack1.svg"), &error).split(QLatin1Char('\n'));
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(lines.contains(QStringLiteral("GPU 32"))); // rack 1 holds servers 4-7
        QVERIFY(lines.contains(QStringLiteral("Rack 1")));
        QVERIFY(!lines.contains(QStringLiteral("GPU 0")));
        QVERIFY(lines.join(QLatin1Char(' ')).contains(QStringLiteral("Part of the cluster: rack:1")));
        QVERIFY(QFileInfo(out("rack1.svg")).size() < 10'000'000);

        for (const char *part : {"gpu:0-63", "node:16-17,40", "su:2", "area:0,0,3000,2000"}) {
            r = run({layout,
                     QStringLiteral("-o"),
                     out("part.png"),
                     QStringLiteral("--region"),
                     QLatin1String(part)});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            const QImage img(out("part.png"));
            QVERIFY2(!img.isNull() && img.width() <= 8192, part);
            QVERIFY2(inkPixels(img) > qint64(img.width()) * img.height() / 10, part);
        }
        r = run({layout,
                 QStringLiteral("-o"),
                 out("su.pdf"),
                 QStringLiteral("--region"),
                 QStringLiteral("su:0")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const auto pdf = runTool(QStringLiteral("pdftotext"), {out("su.pdf"), QStringLiteral("-")});
        QVERIFY2(pdf.ok, qPrintable(pdf.output));
        QVERIFY(pdf.output.contains(QStringLiteral("Rack 7")));

        r = run({layout,
                 QStringLiteral("-o"),
                 out("none.svg"),
                 QStringLiteral("--region"),
                 QStringLiteral("rack:600")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("512 racks")), qPrintable(r.err));
        QVERIFY(!QFile::exists(out("none.svg")));
        r = run({layout,
                 QStringLiteral("-o"),
                 out("none.svg"),
                 QStringLiteral("--region"),
                 QStringLiteral("area:-900000,-900000,10,10")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("outside the cluster")), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestExportRegion)
#include "tst_exportregion.moc"
