// Never lose a layout on a full disk: File > Save, the autosaver and the exports write through
// a checked, atomic save. On a real full file system (a 64 KiB tmpfs, filled up) a failed save
// says why ("No space left on device"), leaves the file on disk byte for byte, keeps the
// document modified and keeps the recovery copy. Skips, saying why, where it cannot mount.
#include "commands/changenotes.h"
#include "document/autosaver.h"
#include "document/document.h"
#include "export/diagramexport.h"
#include "export/reviewreport.h"
#include "mainwindow.h"

#include "windowtest.h"

#include <QDir>
#include <QFile>
#include <QMessageBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

using namespace railyard;
using namespace railyard::test;

namespace {

const QString kNoSpace = QStringLiteral("No space left on device");

// A 64 KiB tmpfs of the test's own (writable, or mounted read-only), unmounted when the test ends
// (even when it fails).
class SmallDisk
{
public:
    enum Mode { Writable, ReadOnly };
    explicit SmallDisk(Mode mode = Writable)
    {
        m_path = m_base.filePath(QStringLiteral("disk"));
        QDir().mkpath(m_path);
        if (::mount("tmpfs",
                    QFile::encodeName(m_path).constData(),
                    "tmpfs",
                    mode == ReadOnly ? MS_RDONLY : 0,
                    "size=64k")
            == 0)
            m_mounted = true;
        else
            m_why = QString::fromLocal8Bit(std::strerror(errno));
    }
    ~SmallDisk()
    {
        if (m_mounted)
            ::umount2(QFile::encodeName(m_path).constData(), MNT_DETACH);
    }
    bool mounted() const { return m_mounted; }
    QString why() const { return QStringLiteral("cannot mount a tmpfs: ") + m_why; }
    QString filePath(const QString &name) const { return m_path + QLatin1Char('/') + name; }
    QStringList entries() const
    {
        return QDir(m_path).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
    }
    // Writes a filler file until the file system refuses: then not one more block is free.
    bool fill() const
    {
        const int fd = ::open(QFile::encodeName(filePath(QStringLiteral("filler"))).constData(),
                              O_WRONLY | O_CREAT | O_TRUNC,
                              0644);
        if (fd < 0)
            return false;
        const QByteArray chunk(512, 'x');
        int err = 0;
        for (;;) {
            if (::write(fd, chunk.constData(), size_t(chunk.size())) < 0) {
                err = errno;
                break;
            }
        }
        ::close(fd);
        return err == ENOSPC;
    }
    void makeRoom() const { QFile::remove(filePath(QStringLiteral("filler"))); }

private:
    QTemporaryDir m_base;
    QString m_path;
    bool m_mounted = false;
    QString m_why;
};

QByteArray contents(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Notes long enough that the layout needs more room than it had.
QString longNotes()
{
    return QString(4000, QLatin1Char('n'));
}

} // namespace

class TestSafeSave : public QObject
{
    Q_OBJECT

    QTemporaryDir m_recovery; // on the real disk

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void cleanup() { closeMessageBoxes(); }

    void saveOnAFullDiskKeepsTheFileAndTheWork()
    {
        SmallDisk disk;
        if (!disk.mounted())
            QSKIP(qPrintable(disk.why()));
        const QString path = disk.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        const QByteArray before = contents(path);
        QVERIFY(!before.isEmpty());
        QString error;
        auto doc = Document::load(path, &error);
        QVERIFY2(doc, qPrintable(error));
        AutoSaver saver(m_recovery.filePath(QStringLiteral("document")));
        saver.setDocument(doc.get());
        doc->undoStack()->push(new ChangeNotes(doc.get(), longNotes()));
        QVERIFY(saver.saveNow());
        const QByteArray recovered = contents(saver.recoveryFile());
        QVERIFY(!recovered.isEmpty());

        QVERIFY(disk.fill());
        QVERIFY(!doc->save(path, &error));
        QVERIFY2(error.contains(kNoSpace), qPrintable(error));
        QVERIFY2(error.startsWith(path + QStringLiteral(": ")), qPrintable(error));
        QCOMPARE(contents(path), before); // not truncated, not replaced
        QVERIFY(doc->isModified());
        QCOMPARE(contents(saver.recoveryFile()), recovered);
        // No temporary file is left to hold the space.
        QCOMPARE(disk.entries(),
                 QStringList({QStringLiteral("filler"), QFileInfo(path).fileName()}));

        // With room again the same save works and reopens to the edited layout.
        disk.makeRoom();
        QVERIFY2(doc->save(path, &error), qPrintable(error));
        QVERIFY(!doc->isModified());
        QVERIFY(!QFile::exists(saver.recoveryFile()));
        auto reopened = Document::load(path, &error);
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->layout().notes, longNotes().toStdString());
    }

    void autosaveOnAFullDiskKeepsThePreviousCopy()
    {
        SmallDisk disk;
        if (!disk.mounted())
            QSKIP(qPrintable(disk.why()));
        auto doc = Document::fromText(contents(layoutPath("gmi-h200-cluster.railyard.json")),
                                      QStringLiteral("gmi"),
                                      nullptr);
        QVERIFY(doc);
        AutoSaver saver(disk.filePath(QStringLiteral("recovery")));
        saver.setDocument(doc.get());
        doc->undoStack()->push(new ChangeNotes(doc.get(), QStringLiteral("first")));
        QVERIFY(saver.saveNow());
        const QByteArray good = contents(saver.recoveryFile());
        QVERIFY(good.contains("first"));

        QVERIFY(disk.fill());
        doc->undoStack()->push(new ChangeNotes(doc.get(), longNotes()));
        QSignalSpy failed(&saver, &AutoSaver::saveFailed);
        QVERIFY(!saver.saveNow());
        QVERIFY2(saver.lastError().contains(kNoSpace), qPrintable(saver.lastError()));
        QVERIFY(saver.lastError().contains(saver.recoveryFile()));
        QCOMPARE(failed.size(), 1);
        QCOMPARE(contents(saver.recoveryFile()), good); // the previous copy, whole
        // Still to be written: the next attempt, with room, writes the new work.
        disk.makeRoom();
        QVERIFY(saver.saveNow());
        QCOMPARE(contents(saver.recoveryFile()), doc->toText());
        QVERIFY(saver.lastError().isEmpty());
    }

    void exportsOnAFullDiskKeepTheOldFile_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("report (Markdown)") << QStringLiteral("report.md");
        QTest::newRow("report (JSON)") << QStringLiteral("report.json");
        QTest::newRow("diagram (SVG)") << QStringLiteral("diagram.svg");
        QTest::newRow("diagram (PNG)") << QStringLiteral("diagram.png");
        QTest::newRow("diagram (PDF)") << QStringLiteral("diagram.pdf");
        QTest::newRow("review report (PDF)") << QStringLiteral("review.pdf");
        QTest::newRow("review report (Markdown)") << QStringLiteral("review.md");
    }

    void exportsOnAFullDiskKeepTheOldFile()
    {
        QFETCH(QString, name);
        SmallDisk disk;
        if (!disk.mounted())
            QSKIP(qPrintable(disk.why()));
        const QString layout = layoutPath("hgx-h100-server.railyard.json");
        const QString out = disk.filePath(name);
        QFile old(out);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("the previous export\n");
        old.close();
        QVERIFY(disk.fill());
        QString error;
        bool written = false;
        if (name.startsWith(QStringLiteral("report"))) {
            auto doc = Document::load(layout, &error);
            QVERIFY2(doc, qPrintable(error));
            written = exportReport(*doc, out, &error);
        } else if (name.startsWith(QStringLiteral("review"))) {
            written = exportLayoutReviewReport(layout, out, QString(), DiagramRegion(), &error);
        } else {
            written = exportLayoutDiagram(layout, out, 1, -1, &error);
        }
        QVERIFY(!written);
        QVERIFY2(error.contains(kNoSpace), qPrintable(error));
        QVERIFY2(error.contains(out), qPrintable(error));
        QCOMPARE(contents(out), QByteArray("the previous export\n"));
        QStringList expected{name, QStringLiteral("filler")};
        expected.sort();
        QCOMPARE(disk.entries(), expected);
    }

    // Room for part of the file only: the PDF and SVG writers do not look at their device's
    // write() results, so the document is drawn in memory and written with a checked write (a
    // 64 KiB disk once kept a 64 KiB head of a 189 KB review PDF and reported success).
    void exportsLargerThanTheRoomLeftFail_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("diagram (PDF)") << QStringLiteral("diagram.pdf");
        QTest::newRow("diagram (SVG)") << QStringLiteral("diagram.svg");
        QTest::newRow("review report (PDF)") << QStringLiteral("review.pdf");
    }

    void exportsLargerThanTheRoomLeftFail()
    {
        QFETCH(QString, name);
        SmallDisk disk;
        if (!disk.mounted())
            QSKIP(qPrintable(disk.why()));
        const QString layout = layoutPath("llama3.1-405b-16k-h100.railyard.json");
        const QString out = disk.filePath(name);
        QString error;
        const bool written = name.startsWith(QStringLiteral("review"))
                                     ? exportLayoutReviewReport(layout,
                                                                out,
                                                                QString(),
                                                                DiagramRegion(),
                                                                &error)
                                     : exportLayoutDiagram(layout, out, 1, -1, &error);
        QVERIFY(!written);
        QVERIFY2(error.contains(kNoSpace), qPrintable(error));
        QVERIFY2(error.contains(out), qPrintable(error));
        QCOMPARE(disk.entries(), QStringList());
    }

    // A read-only folder (a file system mounted read-only: root writes through a folder's
    // permissions): the review report says why, in the window too, and writes nothing.
    void reviewReportInAReadOnlyFolder()
    {
        SmallDisk disk(SmallDisk::ReadOnly);
        if (!disk.mounted())
            QSKIP(qPrintable(disk.why()));
        QString error;
        const QString layout = layoutPath("hgx-h100-server.railyard.json");
        for (const char *name : {"review.pdf", "review.md"}) {
            const QString out = disk.filePath(QLatin1String(name));
            QVERIFY(!exportLayoutReviewReport(layout, out, QString(), DiagramRegion(), &error));
            QVERIFY2(error.contains(QStringLiteral("Read-only file system")), qPrintable(error));
        }
        QVERIFY(disk.entries().isEmpty());
        MainWindow w(nullptr, m_recovery.filePath(QStringLiteral("window")));
        QVERIFY(w.openFile(layout));
        QVERIFY(!w.exportReviewReport(disk.filePath(QStringLiteral("r.pdf"))));
        QVERIFY2(w.lastError().contains(QStringLiteral("Read-only file system")),
                 qPrintable(w.lastError()));
        for (QWidget *top : QApplication::topLevelWidgets())
            if (top->inherits("QMessageBox"))
                top->close();
    }

    void windowSaysWhyAndKeepsTheModifiedMark()
    {
        SmallDisk disk;
        if (!disk.mounted())
            QSKIP(qPrintable(disk.why()));
        const QString path = disk.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        const QByteArray before = contents(path);
        MainWindow w(nullptr, m_recovery.filePath(QStringLiteral("window")));
        QVERIFY(w.openFile(path));
        w.document()->undoStack()->push(new ChangeNotes(w.document(), longNotes()));
        QVERIFY(w.autoSaver()->saveNow());
        QVERIFY(disk.fill());
        QVERIFY(!w.saveTo(path));
        QMessageBox *box = nullptr;
        for (QWidget *top : QApplication::topLevelWidgets())
            if (auto *b = qobject_cast<QMessageBox *>(top); b && b->isVisible())
                box = b;
        QVERIFY(box);
        QVERIFY2(box->text().contains(QStringLiteral("gmi.railyard.json")), qPrintable(box->text()));
        QVERIFY2(box->informativeText().contains(kNoSpace), qPrintable(box->informativeText()));
        QVERIFY(w.isWindowModified());
        QVERIFY(w.document()->isModified());
        QVERIFY(QFile::exists(w.autoSaver()->recoveryFile()));
        QCOMPARE(contents(path), before);
        QVERIFY(w.lastError().contains(kNoSpace));
        w.document()->undoStack()->setClean(); // the window closes without asking
    }
};

QTEST_MAIN(TestSafeSave)
#include "tst_safesave.moc"
