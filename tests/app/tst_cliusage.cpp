// Every subcommand's options with bad values, run through the real executable (issue 17,
// part 8): a malformed value, an unknown option or a missing argument is a usage error (exit 2,
// naming the option and what it expects, before any file is read); a well-formed value that
// does not fit the file (a GPU it does not have, a moment past its step) is bad input (exit 1,
// naming the file).
#include "clirun.h"

#include <QDir>
#include <QFile>
#include <QTest>

using railyard::test::runCli;

class TestCliUsage : public QObject
{
    Q_OBJECT

    static QString data(const char *name) { return QStringLiteral(RAILYARD_TEST_DATA "/") + name; }
    // An output that a failing command must not create.
    static QString never(const char *name)
    {
        return QDir::temp().filePath(QStringLiteral("railyard-tst-cliusage-") + name);
    }

private Q_SLOTS:
    void badOptionValues_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QStringList>("says");
        const QString f = data("example.railyard.json");
        const QString missing = data("no-such.railyard.json");
        const QStringList coll{"collective", f, "--op", "all_reduce", "--size", "1GB"};
        const auto row = [](const char *name, QStringList args, int code, QStringList says) {
            QTest::newRow(name) << args << code << says;
        };

        // collective
        row("--size banana",
            {"collective", f, "--op", "all_reduce", "--size", "banana"},
            2,
            {"--size 'banana'", "expected a number with an optional unit"});
        row("--size unit", {"collective", f, "--op", "all_reduce", "--size", "14XB"}, 2, {"'xb'"});
        row("--size before the file is read",
            {"collective", missing, "--op", "all_reduce", "--size", "banana"},
            2,
            {"--size 'banana'"});
        row("--size missing", {"collective", f, "--op", "all_reduce"}, 2, {"needs --size"});
        row("--size no value",
            {"collective", f, "--op", "all_reduce", "--size"},
            2,
            {"--size needs a value"});
        row("--op nope",
            {"collective", f, "--op", "nope", "--size", "1GB"},
            2,
            {"unknown --op 'nope'", "all_reduce"});
        row("--algo nope",
            coll + QStringList{"--algo", "nope"},
            2,
            {"unknown --algo 'nope'", "flat-ring"});
        row("--gpus 0-",
            coll + QStringList{"--gpus", "0-"},
            2,
            {"--gpus", "is not a GPU index", "0-7,16"});
        row("--gpus backwards",
            coll + QStringList{"--gpus", "5-1"},
            2,
            {"--gpus", "runs backwards"});
        row("--gpus twice", coll + QStringList{"--gpus", "0-3,2"}, 2, {"--gpus", "listed twice"});
        row("--gpus past the cluster",
            coll + QStringList{"--gpus", "0-999"},
            1,
            {"example.railyard.json: --gpus", "GPU 999 does not exist", "128 GPUs"});
        row("--efficiency 2",
            coll + QStringList{"--efficiency", "2", "--algo", "flat-ring"},
            2,
            {"--efficiency '2'", "(0, 1]"});
        row("--efficiency x", coll + QStringList{"--efficiency", "x"}, 2, {"--efficiency 'x'"});
        row("--links=yes", coll + QStringList{"--links=yes"}, 2, {"--links takes no value"});
        row("collective -x", coll + QStringList{"-x"}, 2, {"unknown option -x"});
        row("collective --frob", coll + QStringList{"--frob"}, 2, {"unknown option --frob"});

        // evaluate
        row("--top-links -3",
            {"evaluate", f, "--top-links", "-3"},
            2,
            {"--top-links needs a whole number >= 0, got '-3'"});
        row("--top-links x", {"evaluate", f, "--top-links", "x"}, 2, {"--top-links", "'x'"});
        row("--links nope",
            {"evaluate", f, "--links", "nope"},
            2,
            {"--links takes busiest or all, got 'nope'"});
        row("--json=1", {"evaluate", f, "--json=1"}, 2, {"--json takes no value"});
        row("evaluate -j", {"evaluate", f, "-j"}, 2, {"unknown option -j"});
        row("evaluate -j alone", {"evaluate", "-j"}, 2, {"unknown option -j"});
        row("evaluate two files", {"evaluate", f, f}, 2, {"takes one FILE"});
        row("evaluate no file", {"evaluate"}, 2, {"needs a layout FILE"});
        row("evaluate missing file",
            {"evaluate", missing},
            1,
            {"no-such.railyard.json", "cannot open"});

        // export
        row("-o unknown suffix",
            {"export", f, "-o", "x.docx"},
            2,
            {"cannot tell the format of 'x.docx'", ".svg, .png, .pdf, .md, .csv or .json"});
        row("-o no suffix", {"export", f, "-o", "x"}, 2, {"cannot tell the format of 'x'"});
        row("-o no value", {"export", f, "-o"}, 2, {"--output needs a value"});
        row("--at x",
            {"export", f, "-o", "x.csv", "--at", "x"},
            2,
            {"--at takes a time in seconds", "got 'x'"});
        row("--at -3", {"export", f, "-o", "x.csv", "--at", "-3"}, 2, {"--at", "got '-3'"});
        row("--at past the step",
            {"export", f, "-o", never("late.csv"), "--at", "1e6"},
            1,
            {"example.railyard.json", "past the end of the step"});
        row("--scale banana",
            {"export", f, "-o", "x.png", "--scale", "banana"},
            2,
            {"--scale takes a number from 0.1 to 8, got 'banana'"});
        row("--scale on a report", {"export", f, "-o", "x.md", "--scale", "2"}, 2, {"not a PNG"});
        row("export -x", {"export", f, "-o", "x.md", "-x"}, 2, {"unknown option -x"});
        row("export missing file",
            {"export", missing, "-o", never("x.md")},
            1,
            {"no-such.railyard.json"});

        // plan
        row("--top -3", {"plan", f, "--top", "-3"}, 2, {"--top must be between 1", "got '-3'"});
        row("--top banana",
            {"plan", f, "--top", "banana"},
            2,
            {"--top needs a number, got 'banana'"});
        row("--top 2.5", {"plan", f, "--top", "2.5"}, 2, {"--top needs a whole number"});
        row("--objective nope",
            {"plan", f, "--objective", "nope"},
            2,
            {"--objective takes step_time, cost or tokens_per_dollar, got 'nope'"});
        row("--tokens x",
            {"plan", f, "--buy", "--tokens", "x", "--deadline-days", "1"},
            2,
            {"--tokens needs a number, got 'x'"});
        row("--max-gpus 4",
            {"plan", f, "--buy", "--tokens", "1e12", "--deadline-days", "1", "--max-gpus", "4"},
            2,
            {"--max-gpus must be between 8"});
        row("--json=yes", {"plan", f, "--json=yes"}, 2, {"--json takes no value"});
        row("plan -q", {"plan", f, "-q"}, 2, {"unknown option -q"});

        // import
        row("--gpu nope",
            {"import",
             data("import/topo-m/pcie-2x2080ti-pix-autodl.txt"),
             "-o",
             "/nonexistent/x.json",
             "--gpu",
             "nope"},
            2,
            {"unknown --gpu \"nope\"", "expected one of"});
        row("import -q", {"import", "x.txt", "-o", "y.json", "-q"}, 2, {"unknown option -q"});
        row("import -o no value", {"import", "x.txt", "-o"}, 2, {"--output needs a value"});
    }
    void badOptionValues()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QStringList, says);
        const auto r = runCli(args);
        const QString err = r.errText();
        QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + err));
        for (const QString &s : says)
            QVERIFY2(err.contains(s), qPrintable(err + " lacks: " + s));
        // The message is ours, first: "railyard SUBCOMMAND: ..." or "railyard: FILE: ...".
        QVERIFY2(err.startsWith(QStringLiteral("railyard")), qPrintable(err));
        if (exitCode == 2)
            QVERIFY2(err.contains(QStringLiteral("(see railyard ") + args.front()
                                  + QStringLiteral(" --help)")),
                     qPrintable(err));
        QVERIFY(r.out.isEmpty());
        for (const char *name : {"late.csv", "x.md"})
            QVERIFY(!QFile::exists(never(name)));
    }
};

QTEST_GUILESS_MAIN(TestCliUsage)
#include "tst_cliusage.moc"
