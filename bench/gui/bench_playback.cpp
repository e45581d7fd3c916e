// Playing a step (issue 10): one animation frame is a new playback time (the engine's load at
// that moment on every link, into the canvas state) and a repaint of the 1600 x 1000 canvas in
// the link-load view, offscreen. Prints the median frame at 1,024 and 16,384 GPUs (target: under
// 16.7 ms, 60 fps). `--shots DIR` also writes PNGs of gmi-h200-cluster mid-step (during a TP
// collective, during the DP gradient reduction, the step average) with its timeline panel.
//
// Run: QT_QPA_PLATFORM=offscreen build/bin/bench_playback [--shots DIR] [--only 1k|16k]
#include "document/document.h"
#include "document/viewstate.h"
#include "panels/hottestlinkspanel.h"
#include "panels/linkdescription.h"
#include "panels/timelinepanel.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPainter>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

using namespace railyard;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

QByteArray readLayout(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return f.readAll();
}

struct Shown
{
    std::unique_ptr<Document> doc;
    std::unique_ptr<ClusterScene> scene;
    std::unique_ptr<ClusterView> view;
    std::unique_ptr<ViewState> state;
};

Shown openAndShow(const QByteArray &json)
{
    Shown s;
    QString error;
    s.doc = Document::fromText(json, QStringLiteral("bench"), &error);
    if (!s.doc)
        qFatal("%s", qPrintable(error));
    s.scene = std::make_unique<ClusterScene>(s.doc.get());
    s.state = std::make_unique<ViewState>(s.doc.get());
    s.scene->setViewState(s.state.get());
    s.scene->setLinkLoadVisible(true);
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

void benchFrames(const char *label, const QByteArray &json, int frames)
{
    Shown s = openAndShow(json);
    QImage img(1600, 1000, QImage::Format_ARGB32_Premultiplied);
    render(*s.view, img); // warm up
    const double step = s.state->stepLength();
    std::vector<double> wall, load;
    QElapsedTimer timer;
    for (int i = 0; i < frames; ++i) {
        timer.start();
        s.state->setPlaybackTime(step * (i + 0.5) / frames);
        load.push_back(timer.nsecsElapsed() / 1e6);
        render(*s.view, img);
        wall.push_back(timer.nsecsElapsed() / 1e6);
    }
    std::printf("frame %-22s %8.2f ms median of %d (load at the moment %.2f ms; target < 16.7 "
                "ms); %zu phases, %d links\n",
                label,
                median(wall),
                frames,
                median(load),
                s.doc->evaluation().timeline.phases.size(),
                s.doc->topology().linkCount());
}

void shots(const QString &dir)
{
    Shown s = openAndShow(readLayout(
            QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/gmi-h200-cluster.railyard.json")));
    s.scene->setColourBy(GroupKind::Tp); // as the app opens it
    TimelinePanel panel(s.doc.get(), s.state.get());
    panel.setAttribute(Qt::WA_DontShowOnScreen);
    panel.resize(1600, 170);
    panel.show();
    const engine::StepTimeline &tl = s.doc->evaluation().timeline;
    // A TP collective after the parameter all-gather at the start (stage 0's second).
    const engine::Phase *tp = nullptr;
    for (const engine::Phase &p : tl.phases)
        if (!tp && p.kind == engine::PhaseKind::Tp && p.stage == 0 && p.start > 0)
            tp = &p;
    const engine::Phase *dp = nullptr;
    for (const engine::Phase &p : tl.phases)
        if (p.kind == engine::PhaseKind::Dp && !p.exposed && p.share >= 1.0)
            dp = &p;
    const auto shoot = [&](const char *name, double t) {
        if (t >= 0)
            s.state->setPlaybackTime(t);
        else
            s.state->clearPlaybackTime();
        QImage img(1600, 1170, QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::white);
        QPainter p(&img);
        s.view->render(&p, QRectF(0, 0, 1600, 1000), s.view->viewport()->rect());
        panel.render(&p, QPoint(0, 1000));
        p.end();
        img.save(dir + "/" + name);
        std::printf("wrote %s/%s at t = %.3f s: %s\n",
                    qPrintable(dir),
                    name,
                    t,
                    qPrintable(panel.runningText()));
    };
    shoot("gmi-average.png", -1);
    if (tp)
        shoot("gmi-tp.png", (tp->start + tp->end) / 2);
    if (dp)
        shoot("gmi-dp.png", dp->start + 0.8 * dp->duration());
    // The Hottest Links dock at the DP moment, and the tooltip of its first link with the
    // canvas centred on it (zoomed to single links).
    HottestLinksPanel hottest;
    hottest.setDocument(s.doc.get(), s.state.get());
    hottest.setAttribute(Qt::WA_DontShowOnScreen);
    hottest.resize(460, 560);
    hottest.show();
    hottest.grab().save(dir + "/gmi-hottest.png");
    if (!hottest.links().empty()) {
        const int link = hottest.links()[0];
        s.view->showLink(link);
        s.state->setHoveredLink(link);
        const QPolygonF path = s.scene->geometry().linkPath(link);
        const QPoint at = s.view->mapFromScene(path.size() > 1 ? (path[0] + path[1]) / 2 : path[0]);
        QLabel tip;
        tip.setTextFormat(Qt::RichText);
        tip.setText(s.view->toolTipAt(at));
        tip.setStyleSheet(QStringLiteral("QLabel { background: #ffffe8; border: 1px solid #888; "
                                         "padding: 6px; }"));
        tip.adjustSize();
        QImage img(1600, 1000, QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::white);
        QPainter p(&img);
        s.view->render(&p, QRectF(0, 0, 1600, 1000), s.view->viewport()->rect());
        tip.render(&p, at + QPoint(16, 16));
        p.end();
        img.save(dir + "/gmi-hover.png");
        std::printf("wrote %s/gmi-hover.png: %s\n", qPrintable(dir), qPrintable(tip.text()));
    }
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (const qsizetype at = args.indexOf(QStringLiteral("--shots"));
        at > 0 && at + 1 < args.size()) {
        shots(args[at + 1]);
        return 0;
    }
    const QByteArray big = readLayout(
            QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/llama3.1-405b-16k-h100.railyard.json"));
    QByteArray small = big;
    small.replace("\"nodes\": 2048", "\"nodes\": 128");
    small.replace("\"dp\": 128", "\"dp\": 8");
    // `--only 1k` or `--only 16k`: one size (for a profiler).
    const qsizetype only = args.indexOf(QStringLiteral("--only"));
    const QString size = only > 0 && only + 1 < args.size() ? args[only + 1] : QString();
    if (size.isEmpty() || size == QLatin1String("1k"))
        benchFrames("1,024 GPUs", small, 30);
    if (size.isEmpty() || size == QLatin1String("16k"))
        benchFrames("16,384 GPUs", big, 15);
    return 0;
}
