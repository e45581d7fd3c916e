// The file under the window: two windows on one file (the second's Save asks before it
// overwrites the first's work; Cancel leaves the disk alone), another program writing the open
// file (the window offers to reload it, or says so when it has unsaved changes), and crash
// recovery offering every file crashed sessions left, none silently deleted.
#include "commands/changetitle.h"
#include "document/autosaver.h"
#include "document/document.h"
#include "layout/layout.h"
#include "mainwindow.h"

#include "windowtest.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace railyard;
using namespace railyard::test;

namespace {

QByteArray contents(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::string titleOnDisk(const QString &path)
{
    return engine::parseLayout(contents(path).toStdString(), "disk").title;
}

// What another program does: writes the layout with a new title, in place.
void writeFromOutside(const QString &path, const std::string &title)
{
    engine::Layout layout = engine::parseLayout(contents(path).toStdString(), "disk");
    layout.title = title;
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    const std::string text = engine::layoutToText(layout);
    QCOMPARE(f.write(text.data(), qint64(text.size())), qint64(text.size()));
}

void retitle(MainWindow &w, const QString &title)
{
    w.document()->undoStack()->push(new ChangeTitle(w.document(), title));
}

// What a crashed session leaves: a layout, its note, no live lock.
void leaveOrphan(const QString &dir,
                 const QString &id,
                 const QString &title,
                 const QDateTime &when,
                 const QByteArray &layout)
{
    const QString file = dir + QStringLiteral("/%1.recovery.railyard.json").arg(id);
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(layout);
    f.close();
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.setFileTime(when, QFileDevice::FileModificationTime));
    f.close();
    QFile meta(dir + QStringLiteral("/%1.recovery.meta.json").arg(id));
    QVERIFY(meta.open(QIODevice::WriteOnly));
    meta.write(QStringLiteral(R"({"original": "/home/u/%1.railyard.json", "title": "%1"})")
                       .arg(title)
                       .toUtf8());
}

QByteArray titledLayout(const std::string &title)
{
    engine::Layout layout = engine::readLayoutFile(
            layoutPath("hgx-h100-server.railyard.json").toStdString());
    layout.title = title;
    return QByteArray::fromStdString(engine::layoutToText(layout));
}

} // namespace

class TestFileChanges : public QObject
{
    Q_OBJECT

    QTemporaryDir m_recovery;

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
    void cleanup() { closeMessageBoxes(); }

    void documentNoticesAChangeOnDisk()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        QString error;
        auto doc = Document::load(path, &error);
        QVERIFY2(doc, qPrintable(error));
        QVERIFY(!doc->changedOnDisk());
        // A touch changes the time, not the layout: no change.
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(60),
                              QFileDevice::FileModificationTime));
        f.close();
        QVERIFY(!doc->changedOnDisk());
        // Same size, other bytes: a change.
        QByteArray text = contents(path);
        const qsizetype at = text.indexOf("\"title\": \"") + 10;
        text[at] = text[at] == 'X' ? 'Y' : 'X';
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(text);
        f.close();
        QVERIFY(doc->changedOnDisk());
        // Saving takes what it wrote as what the disk holds.
        QVERIFY2(doc->save(path, &error), qPrintable(error));
        QVERIFY(!doc->changedOnDisk());
        // Gone: nothing to lose by saving.
        QVERIFY(QFile::remove(path));
        QVERIFY(!doc->changedOnDisk());
    }

    void secondWindowAsksBeforeOverwriting()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        MainWindow first(nullptr, m_recovery.path());
        MainWindow second(nullptr, m_recovery.path());
        QStringList asked;
        bool overwrite = false;
        FilePrompts prompts;
        prompts.overwriteChanged = [&](QWidget *parent, const QString &p) {
            asked << p;
            return parent == &second && overwrite;
        };
        prompts.reloadChanged = [](QWidget *, const QString &, bool) { return false; };
        first.setFilePrompts(prompts);
        second.setFilePrompts(prompts);
        QVERIFY(first.openFile(path));
        QVERIFY(second.openFile(path));

        retitle(first, QStringLiteral("first's work"));
        QVERIFY(first.saveTo(path));
        QVERIFY(first.saveTo(path)); // its own file, unchanged since: no question
        QVERIFY(asked.isEmpty());
        QCOMPARE(titleOnDisk(path), "first's work");

        retitle(second, QStringLiteral("second's work"));
        QVERIFY(!second.saveTo(path)); // cancelled
        QCOMPARE(asked, QStringList{path});
        QCOMPARE(titleOnDisk(path), "first's work");
        QVERIFY(second.isWindowModified());
        QVERIFY(second.statusBar()->currentMessage().contains(QStringLiteral("changed on disk")));

        overwrite = true;
        QVERIFY(second.saveTo(path));
        QCOMPARE(asked.size(), 2);
        QCOMPARE(titleOnDisk(path), "second's work");
        QVERIFY(!second.isWindowModified());
        // Now the first window's copy is the stale one.
        QVERIFY(first.document()->changedOnDisk());
        QVERIFY(!second.document()->changedOnDisk());
    }

    void changeOnDiskOffersReloadWhenUnmodified()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        MainWindow w(nullptr, m_recovery.path());
        QList<bool> asked; // "modified" of each question
        FilePrompts prompts;
        prompts.reloadChanged = [&](QWidget *, const QString &p, bool modified) {
            if (p == path)
                asked << modified;
            return true;
        };
        w.setFilePrompts(prompts);
        QVERIFY(w.openFile(path));
        writeFromOutside(path, "written by another program");
        QTRY_COMPARE(asked, QList<bool>{false});
        QTRY_COMPARE(w.document()->layout().title, "written by another program");
        QVERIFY(!w.isWindowModified());
        // Still watched after the reload (and after a save by rename).
        QVERIFY(w.saveTo(path));
        writeFromOutside(path, "and again");
        QTRY_COMPARE(w.document()->layout().title, "and again");
        QCOMPARE(asked, (QList<bool>{false, false}));
    }

    void changeOnDiskKeepsUnsavedWork()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        MainWindow w(nullptr, m_recovery.path());
        QList<bool> asked;
        QStringList overwrites;
        FilePrompts prompts;
        prompts.reloadChanged = [&](QWidget *, const QString &, bool modified) {
            asked << modified;
            return false; // keep my changes
        };
        prompts.overwriteChanged = [&](QWidget *, const QString &p) {
            overwrites << p;
            return false;
        };
        w.setFilePrompts(prompts);
        QVERIFY(w.openFile(path));
        retitle(w, QStringLiteral("mine"));
        writeFromOutside(path, "theirs");
        QTRY_COMPARE(asked, QList<bool>{true});
        QTRY_VERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("changed on disk")));
        QCOMPARE(w.document()->layout().title, "mine");
        QVERIFY(w.isWindowModified());
        QTest::qWait(500); // asked once about one change, not for each event it made
        QCOMPARE(asked.size(), 1);
        QVERIFY(!w.saveTo(path));
        QCOMPARE(overwrites, QStringList{path});
        QCOMPARE(titleOnDisk(path), "theirs");
        w.document()->undoStack()->setClean();
    }

    void everyOrphanedRecoveryIsOffered()
    {
        QTemporaryDir dir;
        const QDateTime now = QDateTime::currentDateTime();
        leaveOrphan(dir.path(), "session-1-1", "oldest", now.addSecs(-300), titledLayout("oldest"));
        leaveOrphan(dir.path(), "session-2-2", "middle", now.addSecs(-200), titledLayout("middle"));
        leaveOrphan(dir.path(), "session-3-3", "newest", now.addSecs(-100), titledLayout("newest"));
        MainWindow w(nullptr, dir.path());
        QStringList offered;
        QList<RecoveryChoice> answer;
        FilePrompts prompts;
        prompts.recover = [&](QWidget *, const QList<RecoveryFile> &found) {
            offered.clear();
            for (const RecoveryFile &r : found)
                offered << r.title + QLatin1Char(' ') + QFileInfo(r.originalPath).fileName();
            return answer;
        };
        w.setFilePrompts(prompts);

        // Cancelled: every file is still there, offered again.
        QVERIFY(!w.offerRecovery());
        QCOMPARE(offered,
                 QStringList({QStringLiteral("newest newest.railyard.json"),
                              QStringLiteral("middle middle.railyard.json"),
                              QStringLiteral("oldest oldest.railyard.json")}));
        QCOMPARE(AutoSaver::orphans(dir.path()).size(), 3);

        // Restore the newest here, keep the middle one, discard the oldest.
        answer = {RecoveryChoice::Restore, RecoveryChoice::Keep, RecoveryChoice::Discard};
        QVERIFY(w.offerRecovery());
        QCOMPARE(w.document()->layout().title, "newest");
        QVERIFY(w.isWindowModified());
        QCOMPARE(w.document()->filePath(), QStringLiteral("/home/u/newest.railyard.json"));
        QVERIFY(contents(w.autoSaver()->recoveryFile()).contains("newest"));
        const auto left = AutoSaver::orphans(dir.path());
        QCOMPARE(left.size(), 1);
        QCOMPARE(left.front().title, QStringLiteral("middle"));
        QCOMPARE(offered.size(), 3);

        // Two restored at once: the second opens in a window of its own.
        leaveOrphan(dir.path(), "session-4-4", "another", now, titledLayout("another"));
        w.document()->undoStack()->setClean(); // this window's work is saved elsewhere
        answer = {RecoveryChoice::Restore, RecoveryChoice::Restore};
        QVERIFY(w.offerRecovery());
        QCOMPARE(offered.size(), 2);
        QCOMPARE(w.document()->layout().title, "another");
        MainWindow *other = nullptr;
        for (QWidget *top : QApplication::topLevelWidgets())
            if (auto *m = qobject_cast<MainWindow *>(top); m && m != &w)
                other = m;
        QVERIFY(other);
        QVERIFY(other->isVisible());
        QCOMPARE(other->document()->layout().title, "middle");
        QVERIFY(other->isWindowModified());
        QVERIFY(QFile::exists(other->autoSaver()->recoveryFile()));
        QVERIFY(AutoSaver::orphans(dir.path()).isEmpty()); // both taken over, by live sessions
        other->document()->undoStack()->setClean();
        delete other;
        w.document()->undoStack()->setClean();
    }

    void restoredWorkStillNoticesAChangeOnDisk()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("gmi.railyard.json"));
        QVERIFY(QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"), path));
        QString error;
        QString fingerprint;
        {
            // The session that crashed: it had read the file, edited and autosaved.
            auto doc = Document::load(path, &error);
            QVERIFY2(doc, qPrintable(error));
            fingerprint = doc->diskFingerprint();
            QVERIFY(fingerprint.contains(QLatin1Char(':')));
            doc->undoStack()->push(new ChangeTitle(doc.get(), QStringLiteral("unsaved")));
            AutoSaver crashed(dir.filePath(QStringLiteral("recovery")));
            crashed.setDocument(doc.get());
            QVERIFY(crashed.saveNow());
            // A crash leaves the files: copy them where no live session holds a lock.
            QDir().mkpath(dir.filePath(QStringLiteral("orphans")));
            QString meta = crashed.recoveryFile();
            meta.replace(QStringLiteral(".recovery.railyard.json"),
                         QStringLiteral(".recovery.meta.json"));
            QVERIFY(QFile::copy(crashed.recoveryFile(),
                                dir.filePath(QStringLiteral("orphans/s.recovery.railyard.json"))));
            QVERIFY(QFile::copy(meta, dir.filePath(QStringLiteral("orphans/s.recovery.meta.json"))));
        }
        writeFromOutside(path, "changed after the crash");
        MainWindow w(nullptr, dir.filePath(QStringLiteral("orphans")));
        QStringList asked;
        FilePrompts prompts;
        prompts.overwriteChanged = [&](QWidget *, const QString &p) {
            asked << p;
            return false;
        };
        w.setFilePrompts(prompts);
        QVERIFY(w.offerRecovery(false));
        QCOMPARE(w.document()->layout().title, "unsaved");
        QCOMPARE(w.document()->diskFingerprint(), fingerprint);
        QVERIFY(!w.saveTo(path));
        QCOMPARE(asked, QStringList{path});
        QCOMPARE(titleOnDisk(path), "changed after the crash");
        w.document()->undoStack()->setClean();
    }

    void unreadableRecoveryIsKept()
    {
        QTemporaryDir dir;
        leaveOrphan(dir.path(), "session-5-5", "broken", QDateTime::currentDateTime(), "{ not json");
        MainWindow w(nullptr, dir.path());
        QVERIFY(!w.offerRecovery(false));
        QVERIFY(w.lastError().contains(QStringLiteral("session-5-5.recovery.railyard.json")));
        QCOMPARE(AutoSaver::orphans(dir.path()).size(), 1);
    }
};

QTEST_MAIN(TestFileChanges)
#include "tst_filechanges.moc"
