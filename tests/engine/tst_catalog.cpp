// The catalog read from files (issue 17, part 4): the user's catalog is a stranger's file. Its
// read is bounded (no FIFO, device or directory, no more than kMaxCatalogBytes), every error
// names the file and the line and column or JSON path, and every rate is positive and finite.
#include "base/inputerror.h"
#include "layout/catalog.h"
#include "layout/catalogfile.h"

#include <QDir>
#include <QElapsedTimer>
#include <QStringDecoder>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <fstream>

#include <sys/stat.h>

using namespace railyard::engine;

static std::string dataPath(const QString &name)
{
    return std::string(RAILYARD_TEST_DATA "/") + name.toStdString();
}

static void checkMessage(const std::string &what, const QStringList &expected)
{
    QStringDecoder utf8(QStringDecoder::Utf8);
    const QString msg = utf8(QByteArray::fromStdString(what));
    qInfo("%s", qPrintable(msg.left(400)));
    QVERIFY2(!utf8.hasError(), "the message is not valid UTF-8");
    QVERIFY2(what.size() < 1000, qPrintable(QString::number(what.size())));
    for (const QString &part : expected)
        QVERIFY2(msg.contains(part), qPrintable(msg.left(400) + " lacks: " + part));
}

// Reads `path` as a catalog, expecting an InputError holding `expected`; returns the message.
static std::string expectRefused(const std::string &path, const QStringList &expected)
{
    try {
        readCatalogFile(path);
    } catch (const InputError &e) {
        checkMessage(e.what(), expected);
        return e.what();
    }
    [&] { QFAIL(qPrintable("no error for " + QString::fromStdString(path))); }();
    return {};
}

// Every rate the engine divides by is positive and finite.
static void checkRates(const Catalog &c)
{
    const auto ok = [](double v) { return std::isfinite(v) && v > 0; };
    for (const GpuSpec &g : c.gpus()) {
        QVERIFY2(ok(g.bf16Tflops) && ok(g.hbmGB) && ok(g.hbmTBPerS) && ok(g.nvlink.gbPerS)
                         && g.nvlink.links > 0,
                 g.id.c_str());
    }
    for (const NicModel &n : c.nics())
        QVERIFY2(ok(n.gbitPerS) && ok(n.efficiency), n.id.c_str());
    for (const PcieSpec &p : c.pcieGenerations())
        QVERIFY(ok(p.gbPerS));
    for (const SwitchModel &s : c.switches())
        QVERIFY2(ok(s.portGbitPerS), s.id.c_str());
}

class TestCatalog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void shippedCatalogsLoad()
    {
        const Catalog built = readCatalogFile(RAILYARD_SOURCE_DIR "/resources/catalog.json");
        QVERIFY(built.gpu("H100-SXM"));
        QCOMPARE(built.gpu("H100-SXM")->nvlink.links, 18);
        checkRates(built);
        checkRates(Catalog::compiledIn());
        const Catalog user = readCatalogFile(dataPath("user-catalog.json"));
        QVERIFY(user.gpu("TEST-GPU"));
        checkRates(user);
    }

    // tests/data/bad/catalog-*.json: each refused, with the file, the place and what was
    // expected.
    void badFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("NVLink 0 GB/s")
                << "catalog-nvlink-zero.json"
                << QStringList{"/gpus/2/nvlink/gb_per_s", "a positive number of GB/s", "got 0"};
        QTest::newRow("no NVLink lanes")
                << "catalog-nvlink-no-links.json"
                << QStringList{"/gpus/0/nvlink/links", "an integer from 1", "got 0"};
        QTest::newRow("0 TFLOPS") << "catalog-zero-tflops.json"
                                  << QStringList{"/gpus/0/bf16_tflops", "positive", "TFLOPS"};
        QTest::newRow("negative HBM bandwidth")
                << "catalog-negative-hbm-bandwidth.json"
                << QStringList{"/gpus/0/hbm_tb_per_s", "positive", "got -3"};
        QTest::newRow("negative host copy rate")
                << "catalog-negative-host-copy.json"
                << QStringList{"/gpus/0/host_copy_gb_per_s/d2h", "got -52"};
        QTest::newRow("negative NIC rate")
                << "catalog-negative-nic.json"
                << QStringList{"/nics/0/gbit_per_s", "a positive number of Gb/s", "got -400"};
        QTest::newRow("GPU twice") << "catalog-duplicate-gpu.json"
                                   << QStringList{"/gpus/2", "the same entry as /gpus/0"};
        QTest::newRow("cut short")
                << "catalog-broken.json" << QStringList{"line 5", "invalid JSON"};
        QTest::newRow("Latin-1 byte")
                << "catalog-invalid-utf8.json" << QStringList{"line 3", "UTF-8"};
        QTest::newRow("1e400") << "catalog-huge-number.json" << QStringList{"line 3", "too large"};
        QTest::newRow("random bytes")
                << "catalog-random-bytes.json" << QStringList{"line 1", "invalid JSON"};
    }
    void badFiles()
    {
        QFETCH(QString, file);
        QFETCH(QStringList, expected);
        expectRefused(dataPath("bad/" + file), QStringList{file} + expected);
    }

    // What is not a regular file is refused at once, without reading or waiting.
    void notAFile()
    {
        QElapsedTimer clock;
        clock.start();
        expectRefused("/dev/urandom",
                      {"/dev/urandom", "a character device", "expected a catalog file"});
        expectRefused("/dev/zero", {"/dev/zero", "a character device"});
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string fifo = dir.filePath(QStringLiteral("catalog.json")).toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        expectRefused(fifo, {"catalog.json", "is a FIFO", "expected a catalog file"});
        expectRefused(dir.path().toStdString(), {"is a directory"});
        expectRefused(dataPath("bad/no-such-catalog.json"), {"no-such-catalog.json", "cannot open"});
        QVERIFY2(clock.elapsed() < 5000, "a special file was waited on");
    }

    void tooLarge()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("big.json")).toStdString();
        std::ofstream(path) << "{\"format\": \"railyard-catalog\", \"notes\": \""
                            << std::string(kMaxCatalogBytes + (1u << 20), 'x') << "\"}";
        expectRefused(path, {"big.json", "MiB", "a catalog is at most 4 MiB"});
    }

    // The seeds of fuzz/fuzz_catalog (tests/data/fuzz/catalog/): each parses with positive
    // rates or is an InputError naming the file; every bad/catalog-* file is among them.
    void fuzzCorpus()
    {
        const QDir corpus(QStringLiteral(RAILYARD_TEST_DATA "/fuzz/catalog"));
        const QStringList seeds = corpus.entryList(QDir::Files);
        QVERIFY(seeds.size() >= 10);
        for (const QString &name : seeds) {
            const std::string path = corpus.filePath(name).toStdString();
            try {
                checkRates(readCatalogFile(path));
            } catch (const InputError &e) {
                QVERIFY2(std::string(e.what()).rfind(path, 0) == 0, e.what());
            }
        }
        const QDir bad(QStringLiteral(RAILYARD_TEST_DATA "/bad"));
        for (const QString &name : bad.entryList({QStringLiteral("catalog-*")}, QDir::Files)) {
            QFile a(bad.filePath(name)), b(corpus.filePath(name));
            QVERIFY(a.open(QIODevice::ReadOnly));
            QVERIFY2(b.open(QIODevice::ReadOnly), qPrintable(name + " is not in fuzz/catalog"));
            QCOMPARE(a.readAll(), b.readAll());
        }
    }
};

QTEST_APPLESS_MAIN(TestCatalog)
#include "tst_catalog.moc"
