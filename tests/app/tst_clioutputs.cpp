// What `railyard export`, `import` and `evaluate` write from a hostile layout, and where they
// refuse to write (issue 17, parts 2 and 3), run through the real executable.
#include "base/safetext.h"
#include "clirun.h"
#include "exportcheck.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using railyard::test::runCli;
using railyard::test::runTool;

namespace {

QString data(const QString &name)
{
    return QStringLiteral(RAILYARD_TEST_DATA "/") + name;
}

// The layout's title, as the file holds it.
QString titleOf(const QString &layout)
{
    return QJsonDocument::fromJson(railyard::test::readFile(layout))
            .object()
            .value(QStringLiteral("title"))
            .toString();
}

// A byte a terminal or an XML parser would act on: C0 but tab and line feed, DEL, C1 (UTF-8),
// or a bidirectional override.
bool hasControl(const QByteArray &s, bool allowLineBreaks = true)
{
    for (qsizetype i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (allowLineBreaks && (c == '\n' || c == '\r' || c == '\t'))
            continue;
        if (c < 0x20 || c == 0x7F)
            return true;
        if (c == 0xC2 && i + 1 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0x80)
            return true;
    }
    return s.contains("\xE2\x80\xAE");
}

bool isCharDevice(const QString &path)
{
    struct stat st = {};
    return ::lstat(path.toLocal8Bit().constData(), &st) == 0 && S_ISCHR(st.st_mode);
}

bool isFifo(const QString &path)
{
    struct stat st = {};
    return ::lstat(path.toLocal8Bit().constData(), &st) == 0 && S_ISFIFO(st.st_mode);
}

} // namespace

class TestCliOutputs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString out(const QString &name) const { return m_dir.filePath(name); }

    static void hostileRows()
    {
        QTest::addColumn<QString>("layout");
        for (const char *name : {"script-title", "control-title", "formula-title", "table-title"})
            QTest::newRow(name) << data(QStringLiteral("hostile/%1.railyard.json").arg(name));
    }

    // Refused with exit 1, the message naming `output` and saying `why`.
    static void refused(const QStringList &args, const QString &output, const QString &why)
    {
        const auto r = runCli(args);
        QVERIFY2(r.exitCode == 1, qPrintable(QString::number(r.exitCode) + ": " + r.errText()));
        QVERIFY2(r.errText().startsWith(QStringLiteral("railyard: ") + output)
                         && r.errText().contains(why),
                 qPrintable(r.errText()));
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void svgIsWellFormedAndRunsNothing_data() { hostileRows(); }
    void svgIsWellFormedAndRunsNothing()
    {
        QFETCH(QString, layout);
        const QString svg = out(QFileInfo(layout).baseName() + QStringLiteral(".svg"));
        const auto r = runCli({QStringLiteral("export"), layout, QStringLiteral("-o"), svg});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(!hasControl(railyard::test::readFile(svg)));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        QString title;
        int elements = 0;
        while (!xml.atEnd()) {
            xml.readNext();
            if (!xml.isStartElement())
                continue;
            ++elements;
            QVERIFY2(xml.name() != QLatin1String("script"), "a <script> element");
            QVERIFY2(!xml.name().startsWith(QLatin1String("on")), "an event element");
            for (const QXmlStreamAttribute &a : xml.attributes())
                QVERIFY2(!a.name().startsWith(QLatin1String("on")), qPrintable(a.name().toString()));
            if (xml.name() == QLatin1String("title"))
                title = xml.readElementText();
        }
        QVERIFY2(!xml.hasError(),
                 qPrintable(
                         QStringLiteral("line %1: %2").arg(xml.lineNumber()).arg(xml.errorString())));
        QVERIFY(elements > 20);
        // The title is the layout's, as text: one line, no control characters.
        const QString expected = QString::fromStdString(
                railyard::engine::plainText(titleOf(layout).toStdString()));
        QCOMPARE(title, expected);
        // Another SVG reader agrees.
        const auto png = runTool(QStringLiteral("rsvg-convert"),
                                 {svg, QStringLiteral("-o"), svg + ".png"});
        QVERIFY2(png.ok, qPrintable(png.output));
    }

    void pdfMetadataIsPlainText_data() { hostileRows(); }
    void pdfMetadataIsPlainText()
    {
        QFETCH(QString, layout);
        const QString pdf = out(QFileInfo(layout).baseName() + QStringLiteral(".pdf"));
        const auto r = runCli({QStringLiteral("export"), layout, QStringLiteral("-o"), pdf});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto info = runTool(QStringLiteral("pdfinfo"), {pdf});
        QVERIFY2(info.ok, qPrintable(info.output));
        const QString expected = QString::fromStdString(
                railyard::engine::plainText(titleOf(layout).toStdString()));
        QVERIFY2(info.output.contains(QStringLiteral("Title:")), qPrintable(info.output));
        QString titleLine;
        for (const QString &l : info.output.split(QLatin1Char('\n')))
            if (l.startsWith(QStringLiteral("Title:")))
                titleLine = l.mid(6).trimmed();
        QCOMPARE(titleLine, expected.trimmed());
        QVERIFY(!hasControl(info.output.toUtf8()));
        const auto text = runTool(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY2(text.ok, qPrintable(text.output));
        QVERIFY(!hasControl(text.output.toUtf8().replace('\f', ' ')));
    }

    void markdownShowsTheTitleAsText_data() { hostileRows(); }
    void markdownShowsTheTitleAsText()
    {
        QFETCH(QString, layout);
        const QString md = out(QFileInfo(layout).baseName() + QStringLiteral(".md"));
        const auto r = runCli({QStringLiteral("export"), layout, QStringLiteral("-o"), md});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QByteArray bytes = railyard::test::readFile(md);
        QVERIFY(!hasControl(bytes));
        const QStringList lines = QString::fromUtf8(bytes).split(QLatin1Char('\n'));
        // The title is the first line and only it: its line breaks do not start a heading.
        QVERIFY2(lines.size() > 2 && lines[0].startsWith(QStringLiteral("# ")) && lines[1].isEmpty(),
                 qPrintable(lines.mid(0, 3).join(QLatin1Char('\n'))));
        // No markup gets through unescaped: every < > | * _ [ ] ` in the title is \-escaped.
        static const QRegularExpression raw(QStringLiteral(R"((?<!\\)[<>|*_\[\]`])"));
        QVERIFY2(!raw.match(lines[0].mid(2)).hasMatch(), qPrintable(lines[0]));
        // Unescaped, the heading reads as the title (its breaks as spaces).
        QString shown = lines[0].mid(2);
        shown.replace(QRegularExpression(QStringLiteral(R"(\\(.))")), QStringLiteral("\\1"));
        QCOMPARE(shown,
                 QString::fromStdString(railyard::engine::plainText(titleOf(layout).toStdString())));
    }

    void csvCellsAreNotFormulas_data() { hostileRows(); }
    void csvCellsAreNotFormulas()
    {
        QFETCH(QString, layout);
        const QString csv = out(QFileInfo(layout).baseName() + QStringLiteral(".csv"));
        const auto r = runCli({QStringLiteral("export"),
                               layout,
                               QStringLiteral("-o"),
                               csv,
                               QStringLiteral("--all-links")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QStringList rows = QString::fromUtf8(railyard::test::readFile(csv))
                                         .split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
        QVERIFY(rows.size() > 10);
        const int columns = int(rows[0].count(QLatin1Char(','))) + 1;
        for (const QString &row : rows) {
            QVERIFY2(!row.contains(QLatin1Char('"')), qPrintable(row)); // no name needs quoting
            const QStringList cells = row.split(QLatin1Char(','));
            QCOMPARE(int(cells.size()), columns);
            for (const QString &c : cells) {
                bool number = false;
                c.toDouble(&number);
                QVERIFY2(number || c.isEmpty() || !QStringLiteral("=+-@\t\r").contains(c.front()),
                         qPrintable(row));
            }
        }
    }

    void terminalOutputHasNoEscapes_data() { hostileRows(); }
    void terminalOutputHasNoEscapes()
    {
        QFETCH(QString, layout);
        auto r = runCli({QStringLiteral("evaluate"), layout});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(!hasControl(r.out), r.out.left(300).constData());
        QVERIFY(!hasControl(r.err));
        if (layout.contains(QStringLiteral("control-title")))
            QVERIFY2(r.out.startsWith(
                             "ctl\\x01 \\x1B[31mred\\x1B[0m \\xC2\\x9B2J \\xE2\\x80\\xAEevil "
                             "\\x7F end\n"),
                     r.out.left(200).constData());
        // JSON: parsed back, the title is the file's; raw, no byte drives a terminal.
        r = runCli({QStringLiteral("plan"),
                    layout,
                    QStringLiteral("--json"),
                    QStringLiteral("--top"),
                    QStringLiteral("1")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(!hasControl(r.out), r.out.left(300).constData());
        QCOMPARE(QJsonDocument::fromJson(r.out).object().value(QStringLiteral("title")).toString(),
                 titleOf(layout));
        r = runCli({QStringLiteral("plan"), layout, QStringLiteral("--top"), QStringLiteral("1")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(!hasControl(r.out), r.out.left(300).constData());
    }

    // A file whose name holds an escape sequence: echoed escaped in the message.
    void fileNamesAreEchoedEscaped()
    {
        const QString name = out(QStringLiteral("x\x1b]0;pwned\x07.railyard.json"));
        const auto r = runCli({QStringLiteral("evaluate"), name});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(!hasControl(r.err), r.err.constData());
        QVERIFY2(r.errText().contains(QStringLiteral("x\\x1B]0;pwned\\x07.railyard.json")),
                 r.err.constData());
    }

    void refusesSpecialFiles()
    {
        const QString layout = data(QStringLiteral("example.railyard.json"));
        const QString fifo = out(QStringLiteral("fifo.csv"));
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        for (const char *suffix : {"", ".svg"}) {
            const QString target = suffix[0] ? fifo + QLatin1String(suffix) : fifo;
            if (suffix[0])
                QVERIFY(::mkfifo(target.toLocal8Bit().constData(), 0600) == 0);
            refused({QStringLiteral("export"), layout, QStringLiteral("-o"), target},
                    target,
                    QStringLiteral(
                            "refusing to write: it is a FIFO (named pipe), not a regular file"));
            QVERIFY(isFifo(target));
        }
        const QString topo = data(QStringLiteral("import/topo-m/pcie-2x2080ti-pix-autodl.txt"));
        refused({QStringLiteral("import"), topo, QStringLiteral("-o"), fifo},
                fifo,
                QStringLiteral("a FIFO"));
        QVERIFY(isFifo(fifo));

        const QString folder = out(QStringLiteral("folder.md"));
        QVERIFY(QDir().mkpath(folder));
        refused({QStringLiteral("export"), layout, QStringLiteral("-o"), folder},
                folder,
                QStringLiteral("it is a folder"));
        QVERIFY(QFileInfo(folder).isDir());

        // A character device. As root, one made here first, so a regression replaces it and not
        // the system's; only once it is refused is /dev/null itself tried.
        const QString null = QStringLiteral("/dev/null");
        if (::geteuid() == 0) {
            const QString device = out(QStringLiteral("null.csv"));
            if (::mknod(device.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 3)) != 0)
                QSKIP("root without mknod: /dev/null is checked in process (tst_outputfile)");
            refused({QStringLiteral("export"), layout, QStringLiteral("-o"), device},
                    device,
                    QStringLiteral("it is a character device"));
            refused({QStringLiteral("import"), topo, QStringLiteral("-o"), device},
                    device,
                    QStringLiteral("it is a character device"));
            QVERIFY(isCharDevice(device));
            if (QTest::currentTestFailed())
                return;
        }
        // `export` needs a suffix (-o /dev/null is a usage error): through a link that has one.
        const QString toNull = out(QStringLiteral("to-null.csv"));
        QVERIFY(QFile::link(null, toNull));
        refused({QStringLiteral("export"), layout, QStringLiteral("-o"), toNull},
                toNull,
                QStringLiteral("it is a symbolic link to /dev/null, a character device"));
        refused({QStringLiteral("import"), topo, QStringLiteral("-o"), null},
                null,
                QStringLiteral("it is a character device"));
        QVERIFY(isCharDevice(null));
    }

    void refusesTheInput()
    {
        const QString layout = out(QStringLiteral("in.json"));
        QVERIFY(QFile::copy(data(QStringLiteral("example.railyard.json")), layout));
        const QByteArray before = railyard::test::readFile(layout);
        refused({QStringLiteral("export"), layout, QStringLiteral("-o"), layout},
                layout,
                QStringLiteral("refusing to write: it is the same file as the input"));
        const QString link = out(QStringLiteral("link-to-in.json"));
        QVERIFY(QFile::link(layout, link));
        refused({QStringLiteral("export"), layout, QStringLiteral("-o"), link},
                link,
                QStringLiteral("it is a symbolic link to "));
        QCOMPARE(railyard::test::readFile(layout), before);

        const QString topo = out(QStringLiteral("topo.txt"));
        QVERIFY(QFile::copy(data(QStringLiteral("import/topo-m/pcie-2x2080ti-pix-autodl.txt")),
                            topo));
        const QByteArray topoBefore = railyard::test::readFile(topo);
        refused({QStringLiteral("import"), topo, QStringLiteral("-o"), topo},
                topo,
                QStringLiteral("the same file as the input"));
        QCOMPARE(railyard::test::readFile(topo), topoBefore);
    }

    void followsASymlinkToARegularFileAndSaysSo()
    {
        const QString layout = data(QStringLiteral("example.railyard.json"));
        const QString real = out(QStringLiteral("real.md"));
        QFile(real).open(QIODevice::WriteOnly);
        const QString link = out(QStringLiteral("to-real.md"));
        QVERIFY(QFile::link(real, link));
        auto r = runCli({QStringLiteral("export"), layout, QStringLiteral("-o"), link});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.errText().contains(
                         link + QStringLiteral(" is a symbolic link: wrote its target ") + real),
                 r.err.constData());
        QVERIFY(QFileInfo(link).isSymLink());
        QVERIFY(railyard::test::readFile(real).startsWith("# "));

        // A dangling link in an existing folder: the file it names is made.
        const QString dangling = out(QStringLiteral("dangling.svg"));
        QVERIFY(QFile::link(QStringLiteral("made.svg"), dangling));
        r = runCli({QStringLiteral("export"), layout, QStringLiteral("-o"), dangling});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.errText().contains(QStringLiteral("is a symbolic link: wrote its target")),
                 r.err.constData());
        QVERIFY(railyard::test::readFile(out(QStringLiteral("made.svg"))).contains("<svg"));
        QVERIFY(QFileInfo(dangling).isSymLink());

        // No temporary file is left anywhere.
        const QStringList left = QDir(m_dir.path())
                                         .entryList(QDir::Files | QDir::Hidden)
                                         .filter(QRegularExpression(QStringLiteral(
                                                 R"(tmp|part|XXXX|\.[A-Za-z0-9]{6}$)")));
        QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char(' '))));
    }
};

QTEST_GUILESS_MAIN(TestCliOutputs)
#include "tst_clioutputs.moc"
