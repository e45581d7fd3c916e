#pragma once

// Runs the real `railyard` executable as scripts do: no display, no user catalog.
#include <QByteArray>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <sys/resource.h>

namespace railyard::test {

// A file's bytes (empty when it cannot be read), and writing them whole.
inline QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

struct CliRun
{
    int exitCode = -1; // -1: timed out, -2: crashed
    QByteArray out;    // the bytes as written (a terminal would see these)
    QByteArray err;
    QString outText() const { return QString::fromUtf8(out); }
    QString errText() const { return QString::fromUtf8(err); }
};

// The environment scripts run in: no display, no platform, no user catalog (XDG_CONFIG_HOME
// points nowhere). Add to it for a run that needs more (a catalog, a config folder).
inline QProcessEnvironment cliEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "RAILYARD_CATALOG"})
        env.remove(QString::fromLatin1(var));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), QStringLiteral("/nonexistent"));
    return env;
}

// How to run it, beyond the arguments.
struct CliOptions
{
    QProcessEnvironment env = cliEnvironment();
    rlim_t memoryLimit = 0;   // the child's address-space limit in bytes (RLIMIT_AS), 0: none
    QString workingDirectory; // empty: the test's
    int timeoutMs = 120000;
};

inline CliRun runCli(const QStringList &args, const CliOptions &o)
{
    QProcess p;
    p.setProcessEnvironment(o.env);
    if (o.memoryLimit > 0)
        p.setChildProcessModifier([limit = o.memoryLimit] {
            const rlimit l{limit, limit};
            setrlimit(RLIMIT_AS, &l);
        });
    if (!o.workingDirectory.isEmpty())
        p.setWorkingDirectory(o.workingDirectory);
    p.start(QStringLiteral(RAILYARD_BINARY), args);
    if (!p.waitForFinished(o.timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, "timed out"};
    }
    if (p.exitStatus() != QProcess::NormalExit)
        return {-2, {}, "crashed: " + p.readAllStandardError()};
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

inline CliRun runCli(const QStringList &args, const QProcessEnvironment &env, int timeoutMs = 120000)
{
    CliOptions o;
    o.env = env;
    o.timeoutMs = timeoutMs;
    return runCli(args, o);
}

inline CliRun runCli(const QStringList &args, int timeoutMs = 120000)
{
    return runCli(args, cliEnvironment(), timeoutMs);
}

} // namespace railyard::test
