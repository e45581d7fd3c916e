// engine/outputfile.h: every file Railyard writes is a regular file, written whole or not at
// all, never a device, a FIFO, a folder or the input itself (issue 17, part 3).
#include "base/inputerror.h"
#include "base/outputfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <ostream>
#include <stdexcept>

using namespace railyard::engine;

namespace {

void put(std::ostream &out, const std::string &text)
{
    out << text;
}

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// The message of the InputError that writing `path` throws (empty: none).
std::string refusal(const QString &path, const std::vector<std::string> &inputs = {})
{
    try {
        writeOutputFile(
                path.toStdString(), [](std::ostream &o) { put(o, "new\n"); }, inputs);
    } catch (const InputError &e) {
        return e.what();
    }
    return {};
}

QStringList everyEntry(const QString &dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System
                               | QDir::NoDotAndDotDot);
}

} // namespace

class TestOutputFile : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const char *name) const { return m_dir.filePath(QLatin1String(name)); }

private Q_SLOTS:
    void writesARegularFileAtomically()
    {
        const QString out = path("a.txt");
        const OutputTarget t = writeOutputFile(out.toStdString(),
                                               [](std::ostream &o) { put(o, "one\n"); });
        QCOMPARE(read(out), QByteArray("one\n"));
        QVERIFY(!t.followedSymlink);
        QVERIFY(t.notice().empty());
        // The permissions of the file it replaces are kept.
        QVERIFY(::chmod(out.toLocal8Bit().constData(), 0640) == 0);
        writeOutputFile(out.toStdString(), [](std::ostream &o) { put(o, "two\n"); });
        QCOMPARE(read(out), QByteArray("two\n"));
        struct stat st = {};
        QVERIFY(::stat(out.toLocal8Bit().constData(), &st) == 0);
        QCOMPARE(int(st.st_mode & 07777), 0640);
        QCOMPARE(everyEntry(m_dir.path()), QStringList{QStringLiteral("a.txt")});
    }

    void aFailedWriteLeavesTheOldFile()
    {
        const QString out = path("keep.txt");
        write(out, "old\n");
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 writeOutputFile(out.toStdString(), [](std::ostream &o) {
                                     put(o, "half");
                                     throw std::runtime_error("stopped");
                                 }));
        QCOMPARE(read(out), QByteArray("old\n"));
        // A write the file system refuses (here: past RLIMIT_FSIZE, EFBIG): named, and the
        // old file stays.
        struct rlimit old = {};
        QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
        const auto previous = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit small = old;
        small.rlim_cur = 4096;
        QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
        std::string message;
        try {
            writeOutputFile(out.toStdString(),
                            [](std::ostream &o) { put(o, std::string(1 << 20, 'x')); });
        } catch (const InputError &e) {
            message = e.what();
        }
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, previous);
        QVERIFY2(message.find(out.toStdString() + ": cannot write: File too large")
                         != std::string::npos,
                 message.c_str());
        QCOMPARE(read(out), QByteArray("old\n"));
        QCOMPARE(everyEntry(m_dir.path()).filter(QStringLiteral("keep")),
                 QStringList{QStringLiteral("keep.txt")});
    }

    // Killed mid-write (SIGKILL: no handler runs): the old file stays and nothing is left
    // beside it, as the temporary file has no name until it is complete.
    void aKillLeavesNoTemporaryFile()
    {
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("killed.json"));
        write(target, "old\n");
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            try {
                writeOutputFile(target.toStdString(), [](std::ostream &o) {
                    put(o, std::string(1 << 20, 'x'));
                    o.flush();
                    ::raise(SIGKILL);
                });
            } catch (...) {
            }
            ::_exit(0);
        }
        int status = 0;
        QVERIFY(::waitpid(child, &status, 0) == child);
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        QCOMPARE(read(target), QByteArray("old\n"));
        QCOMPARE(everyEntry(dir.path()), QStringList{QStringLiteral("killed.json")});
    }

    void refusesWhatIsNotARegularFile()
    {
        const QString fifo = path("fifo.csv");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        std::string m = refusal(fifo);
        QVERIFY2(m.find("fifo.csv: refusing to write: it is a FIFO (named pipe), not a regular "
                        "file")
                         != std::string::npos,
                 m.c_str());
        QVERIFY(QFileInfo(fifo).isFile() == false && QFileInfo::exists(fifo));

        const QString folder = path("folder.md");
        QVERIFY(QDir().mkpath(folder));
        m = refusal(folder);
        QVERIFY2(m.find("refusing to write: it is a folder") != std::string::npos, m.c_str());

        // A device: checked only (a regression here must not replace the system's /dev/null).
        try {
            checkOutputFile("/dev/null");
            QFAIL("/dev/null was accepted");
        } catch (const InputError &e) {
            QVERIFY2(std::string(e.what()).find("/dev/null: refusing to write: it is a "
                                                "character device")
                             != std::string::npos,
                     e.what());
        }
        struct stat st = {};
        QVERIFY(::stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));

        m = refusal(path("no-such-folder/x.json"));
        QVERIFY2(m.find("no-such-folder/x.json: cannot write: the folder") != std::string::npos,
                 m.c_str());
        m = refusal(QString());
        QVERIFY2(m.find("empty") != std::string::npos, m.c_str());
    }

    void refusesTheInput()
    {
        const QString in = path("in.railyard.json");
        write(in, "input\n");
        std::string m = refusal(in, {in.toStdString()});
        QVERIFY2(m.find("refusing to write: it is the same file as the input") != std::string::npos,
                 m.c_str());
        // Through a symlink or a hard link: the same inode.
        const QString link = path("link-to-in.json");
        QVERIFY(QFile::link(in, link));
        m = refusal(link, {in.toStdString()});
        QVERIFY2(m.find("it is a symbolic link to ") != std::string::npos
                         && m.find("the same file as the input") != std::string::npos,
                 m.c_str());
        const QString hard = path("hard.json");
        QVERIFY(::link(in.toLocal8Bit().constData(), hard.toLocal8Bit().constData()) == 0);
        m = refusal(hard, {in.toStdString()});
        QVERIFY2(m.find("the same file as the input") != std::string::npos, m.c_str());
        QCOMPARE(read(in), QByteArray("input\n"));
    }

    void followsASymlinkOnlyToARegularFile()
    {
        const QString real = path("real.md");
        write(real, "old\n");
        const QString link = path("to-real.md");
        QVERIFY(QFile::link(real, link));
        const OutputTarget t = writeOutputFile(link.toStdString(),
                                               [](std::ostream &o) { put(o, "new\n"); });
        QVERIFY(t.followedSymlink);
        QCOMPARE(QString::fromStdString(t.target), real);
        QVERIFY2(t.notice().find("to-real.md is a symbolic link: wrote its target ")
                         != std::string::npos,
                 t.notice().c_str());
        QVERIFY(QFileInfo(link).isSymLink()); // the link stays a link
        QCOMPARE(read(real), QByteArray("new\n"));

        // A dangling link into an existing folder: the file is created where it points.
        const QString dangling = path("dangling.csv");
        QVERIFY(QFile::link(QStringLiteral("made.csv"), dangling));
        writeOutputFile(dangling.toStdString(), [](std::ostream &o) { put(o, "made\n"); });
        QCOMPARE(read(path("made.csv")), QByteArray("made\n"));
        QVERIFY(QFileInfo(dangling).isSymLink());

        // A link to a FIFO or a device is refused, saying what it points to.
        const QString fifo = path("fifo2");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        const QString toFifo = path("to-fifo.svg");
        QVERIFY(QFile::link(fifo, toFifo));
        std::string m = refusal(toFifo);
        QVERIFY2(m.find("it is a symbolic link to ") != std::string::npos
                         && m.find("a FIFO (named pipe)") != std::string::npos,
                 m.c_str());
        const QString toNull = path("to-null.svg");
        QVERIFY(QFile::link(QStringLiteral("/dev/null"), toNull));
        try {
            checkOutputFile(toNull.toStdString());
            QFAIL("a link to /dev/null was accepted");
        } catch (const InputError &e) {
            QVERIFY2(std::string(e.what()).find("character device") != std::string::npos, e.what());
        }
        // A link into a folder that does not exist.
        const QString nowhere = path("nowhere.csv");
        QVERIFY(QFile::link(path("no-such-dir/x.csv"), nowhere));
        m = refusal(nowhere);
        QVERIFY2(m.find("cannot write: the folder") != std::string::npos, m.c_str());
    }
};

QTEST_GUILESS_MAIN(TestOutputFile)
#include "tst_outputfile.moc"
