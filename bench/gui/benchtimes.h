#pragma once

// What the GUI benchmarks share: medians of wall and thread-CPU milliseconds, and the shipped
// layouts (read from the resources) with their server count changed.
#include <QByteArray>
#include <QElapsedTimer>
#include <QFile>
#include <QString>

#include <algorithm>
#include <ctime>
#include <functional>
#include <vector>

namespace railyard::benchtimes {

inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

inline double timeMs(const std::function<void()> &f)
{
    QElapsedTimer t;
    t.start();
    f();
    return t.nsecsElapsed() / 1e6;
}

inline double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Wall and this thread's CPU milliseconds of each run (CPU time is far less disturbed by the
// other processes of a busy machine).
struct Times
{
    std::vector<double> wall, cpu;
    void run(const std::function<void()> &f)
    {
        const double c0 = threadCpuMs();
        wall.push_back(timeMs(f));
        cpu.push_back(threadCpuMs() - c0);
    }
};

inline QByteArray readLayout(const QString &name)
{
    QFile f(QStringLiteral(":/layouts/") + name);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(name));
    return f.readAll();
}

// The 16k preset (2,048 servers, DP 128) with `nodes` servers and DP `dp`.
inline QByteArray withNodes(QByteArray json, int nodes, int dp)
{
    json.replace("\"nodes\": 2048", "\"nodes\": " + QByteArray::number(nodes));
    json.replace("\"dp\": 128", "\"dp\": " + QByteArray::number(dp));
    return json;
}

} // namespace railyard::benchtimes
