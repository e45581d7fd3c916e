// The GUI's speed targets (DESIGN.md): a 16,384-GPU cluster opens and shows in under 1 s; the
// whole view repaints in under 33 ms at 16,384 GPUs and under 16 ms at 1,024 GPUs (a
// 1600 x 1000 view, fitted, rendered into a QImage offscreen). Prints the median of repeated
// runs, wall clock and the thread's CPU time (which other processes on a busy machine disturb
// far less). Run with QT_QPA_PLATFORM=offscreen on a machine without a display.
#include "benchtimes.h"
#include "document/document.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "scene/levelofdetail.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QPainter>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <vector>

using namespace railyard;
using namespace railyard::benchtimes;

namespace {

struct Shown
{
    std::unique_ptr<Document> doc;
    std::unique_ptr<ClusterScene> scene;
    std::unique_ptr<ClusterView> view;
};

Shown openAndShow(const QByteArray &json)
{
    Shown s;
    QString error;
    s.doc = Document::fromText(json, QStringLiteral("bench"), &error);
    if (!s.doc)
        qFatal("%s", qPrintable(error));
    s.scene = std::make_unique<ClusterScene>(s.doc.get());
    s.view = std::make_unique<ClusterView>(s.scene.get());
    s.view->setAttribute(Qt::WA_DontShowOnScreen);
    s.view->setFrameShape(QFrame::NoFrame);
    s.view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    s.view->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    s.view->resize(1600, 1000);
    s.view->show();
    s.view->fitToCluster();
    return s;
}

void render(ClusterView &view, QImage &img)
{
    img.fill(Qt::white);
    QPainter p(&img);
    view.render(&p, QRectF(img.rect()), view.viewport()->rect());
}

void benchRepaint(const char *label, const QByteArray &json, double targetMs, int runs)
{
    Shown s = openAndShow(json);
    QImage img(1600, 1000, QImage::Format_ARGB32_Premultiplied);
    render(*s.view, img); // warm up (fonts, caches)
    Times times;
    for (int i = 0; i < runs; ++i)
        times.run([&] { render(*s.view, img); });
    paintStats() = {};
    render(*s.view, img);
    const PaintStats st = paintStats();
    std::printf("repaint %-28s %8.2f ms (cpu %6.2f ms) median of %d (target < %.0f ms)  zoom %.4f; "
                "drew %d racks, %d servers, %d devices, %d link lines; %d scene items for %d "
                "devices\n",
                label,
                median(times.wall),
                median(times.cpu),
                runs,
                targetMs,
                s.view->zoom(),
                st.racks,
                st.servers,
                st.devices,
                st.linkLines,
                static_cast<int>(s.scene->items().size()),
                s.doc->topology().deviceCount());
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    const QByteArray big = readLayout(QStringLiteral("llama3.1-405b-16k-h100.railyard.json"));

    // `bench_gui --zoom Z [--runs N]` (Z a number, or "fit"): only N repaints of the big cluster
    // at one zoom, for a profiler (valgrind --tool=callgrind counts the same instructions
    // however busy the machine is, where timings do not).
    const QStringList args = app.arguments();
    if (const qsizetype at = args.indexOf(QStringLiteral("--zoom"));
        at > 0 && at + 1 < args.size()) {
        const qsizetype r = args.indexOf(QStringLiteral("--runs"));
        const int runs = r > 0 && r + 1 < args.size() ? args[r + 1].toInt() : 3;
        Shown s = openAndShow(big);
        if (args[at + 1] != QLatin1String("fit")) {
            s.view->setZoom(args[at + 1].toDouble());
            s.view->centerOn(s.scene->sceneRect().center());
        }
        QImage img(1600, 1000, QImage::Format_ARGB32_Premultiplied);
        Times times;
        for (int i = 0; i < runs; ++i)
            times.run([&] { render(*s.view, img); });
        std::printf("repaint 16,384 GPUs at zoom %.4f %8.2f ms (cpu %6.2f ms) median of %d\n",
                    s.view->zoom(),
                    median(times.wall),
                    median(times.cpu),
                    runs);
        return 0;
    }
    const QByteArray small = withNodes(big, 128, 8);

    // Open: parse, build the topology, evaluate, build the scene, lay out and fit the view, and
    // paint the first frame.
    std::vector<double> open, parse;
    for (int i = 0; i < 5; ++i) {
        open.push_back(timeMs([&] {
            Shown s = openAndShow(big);
            QImage img(1600, 1000, QImage::Format_ARGB32_Premultiplied);
            render(*s.view, img);
        }));
        parse.push_back(timeMs([&] {
            QString error;
            auto doc = Document::fromText(big, QStringLiteral("bench"), &error);
        }));
    }
    std::printf("open+show 16,384 GPUs            %8.2f ms median of 5 (target < 1000 ms); of "
                "which the document (parse, topology, evaluate) %.2f ms\n",
                median(open),
                median(parse));

    benchRepaint("16,384 GPUs, fitted", big, 33, 30);
    benchRepaint("1,024 GPUs, fitted", small, 16, 30);

    // Closer views of the big cluster: what a user pans around in.
    Shown s = openAndShow(big);
    QImage img(1600, 1000, QImage::Format_ARGB32_Premultiplied);
    for (double z : {0.08, 0.15, 0.3, 1.0}) {
        s.view->setZoom(z);
        s.view->centerOn(s.scene->sceneRect().center());
        render(*s.view, img);
        Times times;
        for (int i = 0; i < 15; ++i)
            times.run([&] { render(*s.view, img); });
        std::printf("repaint 16,384 GPUs at zoom %-5.2f     %8.2f ms (cpu %6.2f ms) median of 15\n",
                    z,
                    median(times.wall),
                    median(times.cpu));
    }
    return 0;
}
