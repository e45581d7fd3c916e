// Hostile and physically impossible import files (issue 17, parts 6 and 8): each input of
// tests/data/import/hostile/ is refused with the file, the line (and column) and what the
// hardware or the format allows, or imported with a note naming what was wrong.
#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "import/importer.h"
#include "layout/catalog.h"
#include "layout/layout.h"

#include <QDir>
#include <QFile>
#include <QStringDecoder>
#include <QTest>

using namespace railyard::engine;

static std::string hostile(const QString &name)
{
    return std::string(RAILYARD_TEST_DATA "/import/hostile/") + name.toStdString();
}

// Imports `path` as `railyard import` does: the filter, then the nearest layout.
static Layout importLayout(const std::string &path, const ImportOptions &options = {})
{
    return layoutFromImport(importFile(path), Catalog::builtin(), options);
}

static void expectRefused(const std::string &path,
                          const QStringList &expected,
                          const ImportOptions &options = {})
{
    try {
        importLayout(path, options);
        QFAIL(qPrintable("no error for " + QString::fromStdString(path)));
    } catch (const InputError &e) {
        const std::string what = e.what();
        QStringDecoder utf8(QStringDecoder::Utf8);
        const QString msg = utf8(QByteArray::fromStdString(what));
        qInfo("%s", qPrintable(msg));
        QVERIFY2(!utf8.hasError(), "the message is not valid UTF-8");
        QVERIFY2(what.rfind(path, 0) == 0, "the message does not start with the file");
        QVERIFY2(what.size() < 1000, qPrintable(QString::number(what.size())));
        for (const QString &part : expected)
            QVERIFY2(msg.contains(part), qPrintable(msg + "\nlacks: " + part));
    }
}

static bool hasNote(const ImportedMachine &m, const std::string &part)
{
    for (const std::string &n : m.notes)
        if (n.find(part) != std::string::npos)
            return true;
    return false;
}

class TestImportHostile : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void refused_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expected");
        // hgx-h100-8gpu-8nic-sglang30401.txt with GPU3 <-> GPU5 read as NV24 both ways.
        QTest::newRow("NV24 on an H100")
                << "hgx-h100-nv24-pair.txt"
                << QStringList{"line 5, column 49",
                               "GPU3 row, column GPU5: NV24",
                               "the catalog's H100-SXM (taken from the file name) has 18 NVLink "
                               "lanes per GPU",
                               "--gpu"};
        // The same board with GPU3 <-> GPU5 read as NV12 both ways: no longer one value
        // everywhere, it read as a direct mesh of 7 x 18 lanes per GPU, priced far too fast.
        QTest::newRow("one pair off a switched board")
                << "hgx-h100-one-pair-nv12.txt"
                << QStringList{"line 2",
                               "GPU0 row: its NVLink cells (7 x NV18) add up to 126 lanes",
                               "18 NVLink lanes per GPU",
                               "is GPU3 row, column GPU5: NV12 (line 5, column 49) wrong?"};
        QTest::newRow("asymmetric NVLink cell")
                << "hgx-h100-asymmetric-nv.txt"
                << QStringList{"line 5, column 49",
                               "GPU3 row, column GPU5: NV12, but GPU5 row, column GPU3: NV18 "
                               "(line 7, column 33)",
                               "one of the two cells is wrong"};
        QTest::newRow("unknown token")
                << "hgx-h100-unknown-token.txt"
                << QStringList{"line 8, column 25", "\"NVL\" under \"GPU2\"", "expected X, NV#"};
        // Perlmutter's 4 x A100 mesh with every pair at NV6: 18 lanes on a 12-lane GPU. (All
        // at NV8 or more would read as an NVSwitch board, as an H800's NV8 does.)
        QTest::newRow("A100 mesh over its lanes")
                << "perlmutter-a100-mesh-nv6.txt"
                << QStringList{"line 2",
                               "GPU0 row: its NVLink cells (3 x NV6) add up to 18 lanes",
                               "A100-SXM-80GB",
                               "12 NVLink lanes"};
        // A B200 dump with two extra NVSwitch rows on GPU0.
        QTest::newRow("XML GPU over its lanes")
                << "hgx-b200-gpu0-54-lanes.xml"
                << QStringList{"line 5",
                               "GPU0: its <nvlink> counts (3 x NV18) add up to 54 lanes",
                               "B200"};
        // The UBSan finding: converting 1e20 to an integer (107 bytes in the issue).
        QTest::newRow("XML sm 1e20")
                << "xml-gpu-sm-1e20.xml"
                << QStringList{"line 4", "<gpu sm=\"1e20\">", "expected an integer from 0 to 10000"};
        QTest::newRow("XML count -1e20")
                << "xml-nvlink-count-minus-1e20.xml"
                << QStringList{"line 5", "<nvlink count=\"-1e20\">", "expected an integer from 0"};
        QTest::newRow("log of damaged rows only")
                << "h100-allreduce-only-damaged-rows.txt"
                << QStringList{"line 16",
                               "8 fields; a result row has 13",
                               "the first of 2 result rows, all damaged",
                               "no usable result rows"};
    }
    void refused()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, expected);
        expectRefused(hostile(file), expected);
    }

    // A GPU named on the command line is held to its own lanes; an unknown one to the most
    // lanes of any catalog GPU.
    void lanesOfTheChosenGpu()
    {
        ImportOptions a100;
        a100.gpu = "A100-SXM-80GB";
        expectRefused(RAILYARD_TEST_DATA "/import/topo-m/hgx-h100-8gpu-8nic-sglang30401.txt",
                      {"line 2, column 17",
                       "GPU0 row, column GPU1: NV18",
                       "the catalog's A100-SXM-80GB (--gpu) has 12 NVLink lanes"},
                      a100);
        const std::string header = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n";
        std::string text = header;
        for (int r = 0; r < 4; ++r) {
            text += "GPU" + std::to_string(r);
            for (int c = 0; c < 4; ++c)
                text += c == r ? "\t X " : "\tNV20";
            text += "\t0-7\n";
        }
        try {
            layoutFromImport(importText(text, "server.txt"), Catalog::builtin());
            QFAIL("NV20 on an unknown GPU was accepted");
        } catch (const InputError &e) {
            qInfo("%s", e.what());
            const std::string what = e.what();
            QVERIFY2(what.find("server.txt: line 2, column 10: GPU0 row, column GPU1: NV20, but no "
                               "GPU in the catalog has more than 18 NVLink lanes")
                             != std::string::npos,
                     e.what());
        }
    }

    // A PCIe code that reads differently across the diagonal moves a device between PCIe
    // switches only: imported, with a note naming the first such cell.
    void asymmetricPcieIsNoted()
    {
        const ImportedMachine m = importFile(hostile("hgx-h100-asymmetric-pcie.txt"));
        QVERIFY(hasNote(m,
                        "1 device pair(s) read differently across the diagonal (first: GPU2 row, "
                        "column NIC2: NODE at line 4, column 89, but NIC2 row, column GPU2: PIX)"));
        QVERIFY(layoutFromImport(m, Catalog::builtin()).cluster.server);
    }

    void damagedRowsAreNoted()
    {
        const ImportedMachine m = importFile(hostile("h100-allreduce-2-damaged-rows.txt"));
        QCOMPARE(m.measurements.size(), std::size_t(8)); // 4 good rows of 6, both halves
        const std::string note = "2 damaged rows skipped (first at line 18: 11 fields; a result "
                                 "row has 13";
        QVERIFY(hasNote(m, note));
        QVERIFY(importSummary(m)["notes"].dump().find("2 damaged rows skipped")
                != std::string::npos);
        const Layout l = layoutFromImport(m, Catalog::builtin());
        QVERIFY2(l.notes.find(note) != std::string::npos, l.notes.c_str());
        // The largest size still calibrates (4 GiB at line 21).
        QCOMPARE(m.largest()->line, 21);
        // A non-numeric field is damage too.
        std::string log = "# nThread 1 nGpus 2\n"
                          "8 2 float sum -1 1.0 1.0 1.0 0 1.0 1.0 1.0 0\n"
                          "16 4 float sum -1 1.0 1.0 x.0 0 1.0 1.0 1.0 0\n";
        const ImportedMachine n = importText(log, "one-bad.txt");
        QCOMPARE(n.measurements.size(), std::size_t(2));
        QVERIFY(hasNote(n,
                        "1 damaged row skipped (first at line 3: busbw \"x.0\": expected a "
                        "finite number)"));
    }

    // Every real fixture still imports, and none of them reads as damaged or lopsided.
    void realFixturesStillImport()
    {
        int files = 0;
        for (const char *dir : {"topo-m", "nccl-topo-xml", "nccl-graph-xml", "nccl-tests"}) {
            const QDir d(QStringLiteral(RAILYARD_TEST_DATA "/import/") + QLatin1String(dir));
            for (const QString &name : d.entryList(QDir::Files)) {
                const std::string path = d.filePath(name).toStdString();
                try {
                    const ImportedMachine m = importFile(path);
                    QVERIFY2(!hasNote(m, "damaged") && !hasNote(m, "diagonal"), path.c_str());
                    layoutFromImport(m, Catalog::builtin());
                } catch (const InputError &e) {
                    QFAIL(e.what());
                }
                ++files;
            }
        }
        QCOMPARE(files, 38);
    }

    // Every hostile input is also a fuzzing seed (tests/data/fuzz/import-hostile/, or
    // import-crashers/ for what crashed), byte for byte.
    void hostileInputsAreFuzzSeeds()
    {
        const QDir dir(QStringLiteral(RAILYARD_TEST_DATA "/import/hostile"));
        const QStringList names = dir.entryList(QDir::Files);
        QCOMPARE(names.size(), 11);
        for (const QString &name : names) {
            QFile source(dir.filePath(name));
            QVERIFY(source.open(QIODevice::ReadOnly));
            const QByteArray bytes = source.readAll();
            bool found = false;
            for (const char *seeds : {"import-hostile", "import-crashers"}) {
                QFile seed(QStringLiteral(RAILYARD_TEST_DATA "/fuzz/") + QLatin1String(seeds)
                           + QLatin1Char('/') + name);
                found = found || (seed.open(QIODevice::ReadOnly) && seed.readAll() == bytes);
            }
            QVERIFY2(found, qPrintable(name + " is not a fuzzing seed"));
        }
    }
};

QTEST_APPLESS_MAIN(TestImportHostile)
#include "tst_importhostile.moc"
