#pragma once

// Runs the real `railyard` executable as scripts do: no display, no user catalog.
#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace railyard::test {

struct CliRun
{
    int exitCode = -1; // -1: timed out, -2: crashed
    QByteArray out;    // the bytes as written (a terminal would see these)
    QByteArray err;
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

inline CliRun runCli(const QStringList &args, const QProcessEnvironment &env, int timeoutMs = 120000)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(RAILYARD_BINARY), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, "timed out"};
    }
    if (p.exitStatus() != QProcess::NormalExit)
        return {-2, {}, "crashed: " + p.readAllStandardError()};
    return {p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

inline CliRun runCli(const QStringList &args, int timeoutMs = 120000)
{
    return runCli(args, cliEnvironment(), timeoutMs);
}

} // namespace railyard::test
