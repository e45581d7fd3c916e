// A bad user catalog on the command line and at GUI start (issue 17, part 4): --help and
// --version answer whatever the catalog is; every subcommand exits 1 with a message naming the
// catalog file, the place in it and what was expected; a FIFO or a device never blocks nor
// aborts; the GUI starts on the built-in catalog and says why. Also `railyard import` on the
// hostile import files (parts 6 and 8). Runs the real executable.
#include "clirun.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

class TestCatalogCli : public QObject
{
    Q_OBJECT

    // `catalog`: $RAILYARD_CATALOG (empty: unset); `config`: $XDG_CONFIG_HOME.
    static QProcessEnvironment environment(const QString &catalog, const QString &config)
    {
        QProcessEnvironment env = railyard::test::cliEnvironment();
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), config);
        if (!catalog.isEmpty())
            env.insert(QStringLiteral("RAILYARD_CATALOG"), catalog);
        return env;
    }

    // The output as text: what the checks below read.
    struct Run
    {
        int exitCode;
        QString out;
        QString err;
    };
    static Run run(const QStringList &args,
                   const QString &catalog,
                   const QString &config = QStringLiteral("/nonexistent"))
    {
        const railyard::test::CliRun r = railyard::test::runCli(args,
                                                                environment(catalog, config),
                                                                30000);
        return {r.exitCode, QString::fromUtf8(r.out), r.errText()};
    }
    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }

    QTemporaryDir m_dir;
    QString m_fifo;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_fifo = m_dir.filePath(QStringLiteral("fifo-catalog.json"));
        QCOMPARE(::mkfifo(QFile::encodeName(m_fifo).constData(), 0600), 0);
    }

    void helpAndVersionAnswer_data()
    {
        QTest::addColumn<QString>("catalog");
        QTest::newRow("/dev/urandom") << QStringLiteral("/dev/urandom");
        QTest::newRow("FIFO") << m_fifo;
        QTest::newRow("NVLink 0 GB/s") << data("bad/catalog-nvlink-zero.json");
        QTest::newRow("directory") << m_dir.path();
    }
    void helpAndVersionAnswer()
    {
        QFETCH(QString, catalog);
        const Run help = run({QStringLiteral("--help")}, catalog);
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.startsWith(QStringLiteral("usage: railyard")));
        const Run version = run({QStringLiteral("--version")}, catalog);
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.startsWith(QStringLiteral("railyard ")));
        const Run sub = run({QStringLiteral("evaluate"), QStringLiteral("--help")}, catalog);
        QCOMPARE(sub.exitCode, 0);
        QVERIFY2(sub.out.contains(QStringLiteral("usage: railyard evaluate")), qPrintable(sub.out));
    }

    void subcommandsRefuse_data()
    {
        QTest::addColumn<QString>("catalog");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("/dev/urandom")
                << QStringLiteral("/dev/urandom")
                << QStringList{"/dev/urandom: is a character device; expected a catalog file"};
        QTest::newRow("FIFO") << m_fifo
                              << QStringList{
                                         "fifo-catalog.json: is a FIFO; expected a catalog file"};
        QTest::newRow("directory") << m_dir.path() << QStringList{"is a directory"};
        QTest::newRow("NVLink 0 GB/s")
                << data("bad/catalog-nvlink-zero.json")
                << QStringList{"catalog-nvlink-zero.json: /gpus/2/nvlink/gb_per_s: expected a "
                               "positive number of GB/s up to 100000, got 0"};
        QTest::newRow("broken JSON") << data("bad/catalog-broken.json")
                                     << QStringList{"catalog-broken.json: line 5", "invalid JSON"};
        QTest::newRow("missing") << data("bad/no-such-catalog.json")
                                 << QStringList{"no-such-catalog.json: cannot open"};
    }
    void subcommandsRefuse()
    {
        QFETCH(QString, catalog);
        QFETCH(QStringList, expected);
        // Each of these runs with the built-in catalog (exit 0).
        const QString layout = data("example.railyard.json");
        const QString out = m_dir.filePath(QStringLiteral("out.md"));
        const QList<QStringList> commands{
                {"evaluate", layout},
                {"collective", layout, "--op", "all_reduce", "--size", "1GB"},
                {"plan", layout},
                {"export", layout, "-o", out},
                {"import", data("import/topo-m/hgx-h100-8gpu-8nic-sglang30401.txt"), "-o", out}};
        for (const QStringList &args : commands) {
            QElapsedTimer clock;
            clock.start();
            const Run r = run(args, catalog);
            QVERIFY2(clock.elapsed() < 20000, qPrintable(args.front() + " waited"));
            QVERIFY2(r.exitCode == 1, qPrintable(args.front() + ": " + r.err));
            QVERIFY2(r.err.startsWith(QStringLiteral("railyard: bad user catalog (from "
                                                     "$RAILYARD_CATALOG): ")),
                     qPrintable(r.err));
            for (const QString &part : expected)
                QVERIFY2(r.err.contains(part), qPrintable(r.err + " lacks: " + part));
            QVERIFY(r.out.isEmpty());
            QVERIFY(!QFile::exists(out));
        }
    }

    // ~/.config/railyard/catalog.json is looked at without being opened: a FIFO there is
    // refused at once.
    void configFolderCatalog()
    {
        QTemporaryDir config;
        QVERIFY(QDir(config.path()).mkpath(QStringLiteral("railyard")));
        const QString fifo = config.filePath(QStringLiteral("railyard/catalog.json"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        const Run r = run({QStringLiteral("evaluate"), data("seed-1-server.railyard.json")},
                          QString(),
                          config.path());
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("bad user catalog (from "
                                               "$XDG_CONFIG_HOME/railyard/catalog.json): ")
                                + fifo + QStringLiteral(": is a FIFO")),
                 qPrintable(r.err));
    }

    // The GUI opens on the built-in catalog and says why, on stderr and in a message box.
    void guiStartsWithABadCatalog_data()
    {
        QTest::addColumn<QString>("catalog");
        QTest::addColumn<QString>("expected");
        QTest::newRow("/dev/urandom")
                << QStringLiteral("/dev/urandom") << QStringLiteral("is a character device");
        QTest::newRow("FIFO") << m_fifo << QStringLiteral("is a FIFO");
        QTest::newRow("NVLink 0 GB/s") << data("bad/catalog-nvlink-zero.json")
                                       << QStringLiteral("/gpus/2/nvlink/gb_per_s");
    }
    void guiStartsWithABadCatalog()
    {
        QFETCH(QString, catalog);
        QFETCH(QString, expected);
#ifndef RAILYARD_HAVE_GUI
        QSKIP("a GUI-less build opens no window (tst_clicontract's theBuildsExecutable)");
#endif
        QTemporaryDir config; // the GUI's settings and recovery folder
        QProcess p;
        QProcessEnvironment env = environment(catalog, config.path());
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_DATA_HOME"), config.path());
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(RAILYARD_BINARY), {data("seed-1-server.railyard.json")});
        QVERIFY(p.waitForStarted());
        // Still running after the start (it aborted at once, or hung on the FIFO before
        // saying anything).
        const bool exited = p.waitForFinished(4000);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(!exited, qPrintable(QStringLiteral("the GUI exited: ") + err));
        p.kill();
        p.waitForFinished();
        QVERIFY2(err.contains(QStringLiteral("railyard: bad user catalog"))
                         && err.contains(expected)
                         && err.contains(QStringLiteral("(using the built-in catalog)")),
                 qPrintable(err));
    }

    // `railyard import` refuses a physically impossible matrix (exit 1, the cell, no output)
    // and notes the damaged rows of a log on stderr.
    void importHostile()
    {
        const QString out = m_dir.filePath(QStringLiteral("imported.railyard.json"));
        const Run nv24 = run({QStringLiteral("import"),
                              data("import/hostile/hgx-h100-nv24-pair.txt"),
                              QStringLiteral("-o"),
                              out},
                             QString());
        QCOMPARE(nv24.exitCode, 1);
        QVERIFY2(nv24.err.contains(QStringLiteral(
                         "hgx-h100-nv24-pair.txt: line 5, column 49: GPU3 row, column GPU5: NV24, "
                         "but the catalog's H100-SXM")),
                 qPrintable(nv24.err));
        QVERIFY(!QFile::exists(out));
        const Run damaged = run({QStringLiteral("import"),
                                 data("import/hostile/h100-allreduce-2-damaged-rows.txt"),
                                 QStringLiteral("-o"),
                                 out},
                                QString());
        QCOMPARE(damaged.exitCode, 0);
        QVERIFY2(damaged.err.contains(QStringLiteral("2 damaged rows skipped (first at line 18: ")),
                 qPrintable(damaged.err));
        QVERIFY(QFile::exists(out));
        const Run none = run({QStringLiteral("import"),
                              data("import/hostile/h100-allreduce-only-damaged-rows.txt"),
                              QStringLiteral("-o"),
                              out + QStringLiteral("2")},
                             QString());
        QCOMPARE(none.exitCode, 1);
        QVERIFY2(none.err.contains(QStringLiteral("line 16: ")), qPrintable(none.err));
    }
};

QTEST_GUILESS_MAIN(TestCatalogCli)
#include "tst_catalogcli.moc"
