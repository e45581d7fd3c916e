// The Collective Lesson dock (issue 10): stepping a lesson lights the step's links on the canvas
// (the engine's links, and pixels that change), marks the GPUs that send, follows the chosen
// group and algorithm, says why an algorithm cannot run, and ends cleanly when the cluster
// changes or the dock closes.
#include "commands/changecluster.h"
#include "document/document.h"
#include "document/lessonframe.h"
#include "document/viewstate.h"
#include "mainwindow.h"
#include "panels/guidedtourpanel.h"
#include "panels/lessonpanel.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include "canvasfixture.h"

#include "windowtest.h"

#include <QAbstractAnimation>
#include <QComboBox>
#include <QDockWidget>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPainter>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include "comparenear.h"
#include <algorithm>

using namespace railyard;

namespace {

std::unique_ptr<Document> openTestData(const char *name)
{
    QString error;
    auto doc = Document::load(QStringLiteral(RAILYARD_SOURCE_DIR "/tests/data/")
                                      + QLatin1String(name),
                              &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

struct Canvas : test::Canvas
{
    explicit Canvas(Document *doc)
        : test::Canvas(doc, {.size = {1200, 800}, .fit = false, .frame = true})
    {}
    QImage grab() { return render(); }
};

int choiceStarting(const LessonPanel &p, const QString &prefix)
{
    for (int i = 0; i < p.groupChoiceCount(); ++i)
        if (p.groupBox()->itemText(i).startsWith(prefix))
            return i;
    return -1;
}

void chooseAlgorithm(LessonPanel &p, engine::Algorithm a)
{
    p.algorithmBox()->setCurrentIndex(p.algorithmBox()->findData(int(a)));
    p.restart();
}

std::vector<int> frameLinks(const ViewState &v)
{
    std::vector<int> out;
    if (v.lesson())
        for (const LessonFrame::Link &l : v.lesson()->links)
            out.push_back(l.link);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

class TestLessonPanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_recovery;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    // The default lesson: a ring all-reduce of 1 GiB on one server. Its steps light the
    // eight GPUs' NVLinks (and nothing else), change the canvas's pixels, and move the chunks.
    void steppingLightsTheStepsLinks()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const engine::Topology &t = doc->topology();
        // Server 0 at full size: badges and bars show from about 28 pixels a GPU.
        c.view.setZoom(1.0);
        c.view.centerOn(c.scene.geometry().nodeRect(0).center());
        const QImage before = c.grab();
        LessonPanel p;
        p.setDocument(doc.get(), &c.state);
        QVERIFY(!p.hasLesson()); // nothing until the dock shows
        QVERIFY(!c.state.lesson());
        p.setActive(true);
        QVERIFY2(p.hasLesson(), qPrintable(p.statusLabel()->text()));
        QCOMPARE(p.stepCount(), 14);
        QCOMPARE(p.slider()->maximum(), 13);
        QVERIFY(p.stepLabel()->text().startsWith(QStringLiteral("Step 1 of 14 - reduce-scatter")));
        QVERIFY(p.formulaLabel()->text().contains(QStringLiteral("2(n-1)/n x S / B_NVLink")));
        QVERIFY(p.totalLabel()->text().contains(QStringLiteral("estimate")));
        QCOMPARE(p.transfersList()->count(), 8);

        std::vector<int> nvlinks;
        for (int g = 0; g < 8; ++g)
            for (int l : t.gpuNvlinks(g))
                nvlinks.push_back(l);
        std::sort(nvlinks.begin(), nvlinks.end());
        QCOMPARE(frameLinks(c.state), nvlinks);
        // The scene shows the lesson's loads in place of the link-load view.
        const CanvasState &s = c.scene.canvasState();
        QVERIFY(s.lesson);
        QVERIFY(s.showLoads());
        for (int l : nvlinks)
            QVERIFY(s.load(l) > 0.99); // every NVLink is the step's bottleneck in a ring
        QCOMPARE(s.load(t.nicUplink(0)), 0.0);
        // Every GPU sends; its badge names the chunk.
        QCOMPARE(int(c.state.lesson()->senders.size()), 8);
        const auto badge = [&](int device) {
            for (const LessonFrame::Badge &b : c.state.lesson()->badges)
                if (b.device == device)
                    return b.text;
            return QString();
        };
        const QString first = badge(t.gpuDevice(0));
        QCOMPARE(first, QStringLiteral("c7"));
        const QImage lit = c.grab();
        if (qEnvironmentVariableIsSet("RAILYARD_SHOTS_DIR"))
            lit.save(qEnvironmentVariable("RAILYARD_SHOTS_DIR")
                     + QStringLiteral("/lesson-ring.png"));
        QVERIFY(lit != before);

        p.forward();
        QCOMPARE(p.step(), 1);
        QCOMPARE(badge(t.gpuDevice(0)), QStringLiteral("c6"));
        QVERIFY(p.stepLabel()->text().startsWith(QStringLiteral("Step 2 of 14")));
        const QImage second = c.grab();
        QVERIFY(second != lit); // the badges moved on
        p.back();
        QCOMPARE(p.step(), 0);
        QCOMPARE(c.grab(), lit);

        // The step's playback does not take the canvas from the lesson.
        c.state.setPlaybackTime(doc->evaluation().timeline.stepS / 2);
        QVERIFY(c.scene.canvasState().lesson);
        QVERIFY(c.scene.canvasState().load(nvlinks.front()) > 0.99);
        QCOMPARE(c.grab(), lit);
        c.state.clearPlaybackTime();
        // Play runs the steps on the view state's one animation driver, a step per
        // kLessonStepMs; pausing stops it.
        p.togglePlay();
        QVERIFY(p.isPlaying());
        QVERIFY(c.state.isLessonPlaying());
        c.state.driver()->setCurrentTime(ViewState::kLessonStepMs + 10);
        QCOMPARE(p.step(), 1);
        QCOMPARE(c.grab(), second);
        c.state.driver()->setCurrentTime(ViewState::kLessonStepMs / 2);
        QCOMPARE(p.step(), 0);
        QCOMPARE(c.grab(), lit);
        p.togglePlay();
        QVERIFY(!p.isPlaying());
        QVERIFY(!c.state.isLessonPlaying());
        // To the end: the driver stops at the last step, and so does the panel.
        p.togglePlay();
        c.state.driver()->setCurrentTime(c.state.driver()->duration());
        QCOMPARE(p.step(), p.stepCount() - 1);
        QVERIFY(!p.isPlaying());
        // Playing the step takes the driver from the lesson.
        p.setStep(0);
        p.togglePlay();
        QVERIFY(p.isPlaying());
        c.state.play();
        QVERIFY(c.state.isPlaying() && !p.isPlaying());
        c.state.pause();
        c.state.clearPlaybackTime();
        p.setStep(0);
        QCOMPARE(c.grab(), lit);

        // Tabbing away (inactive) puts the canvas back as it was.
        p.setActive(false);
        QVERIFY(!c.state.lesson());
        QVERIFY(!c.scene.canvasState().lesson);
        QCOMPARE(c.grab(), before);
    }

    // Two servers, hierarchical: the step across servers lights NIC links, the steps inside
    // the servers only NVLinks.
    void hierarchicalAcrossTwoServers()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const engine::Topology &t = doc->topology();
        LessonPanel p;
        p.setDocument(doc.get(), &c.state);
        p.setActive(true);
        const int both = choiceStarting(p, QStringLiteral("Across two servers: all 16"));
        QVERIFY(both >= 0);
        p.groupBox()->setCurrentIndex(both);
        chooseAlgorithm(p, engine::Algorithm::Hierarchical);
        QVERIFY2(p.hasLesson(), qPrintable(p.statusLabel()->text()));
        QCOMPARE(p.stepCount(), 16);
        const auto hasNetworkLink = [&] {
            for (int l : frameLinks(c.state))
                if (t.links()[static_cast<std::size_t>(l)].kind != engine::LinkKind::NvLink)
                    return true;
            return false;
        };
        QVERIFY(!hasNetworkLink());
        p.setStep(7);
        QVERIFY(p.stepLabel()->text().contains(QStringLiteral("across servers")));
        QVERIFY(hasNetworkLink());
        const std::vector<int> links = frameLinks(c.state);
        QVERIFY(std::binary_search(links.begin(), links.end(), t.nicUplink(0)));
        QVERIFY(c.scene.canvasState().load(t.nicUplink(0)) > 0);
    }

    // An algorithm the hardware lacks: the reason, no lesson on the canvas.
    void unavailableAlgorithmSaysWhy()
    {
        auto doc = openTestData("collectives/a100-1node.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        LessonPanel p;
        p.setDocument(doc.get(), &c.state);
        p.setActive(true);
        QVERIFY(p.hasLesson());
        chooseAlgorithm(p, engine::Algorithm::Nvls);
        QVERIFY(!p.hasLesson());
        QVERIFY(!c.state.lesson());
        QVERIFY2(p.statusLabel()->text().contains(QStringLiteral("NVLS needs NVLink SHARP")),
                 qPrintable(p.statusLabel()->text()));
    }

    // A changed cluster ends the lesson: no frame, no stale ids on the canvas.
    void clusterChangeEndsTheLesson()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        LessonPanel p;
        p.setDocument(doc.get(), &c.state);
        p.setActive(true);
        QVERIFY(p.hasLesson());
        QVERIFY(c.scene.canvasState().lesson);
        engine::ClusterConfig cluster = doc->layout().cluster;
        cluster.nodes = 4;
        doc->undoStack()->push(new ChangeCluster(doc.get(), cluster, QStringLiteral("servers")));
        QCOMPARE(doc->topology().gpuCount(), 32);
        QVERIFY(!p.hasLesson());
        QVERIFY(!c.state.lesson());
        QVERIFY(!c.scene.canvasState().lesson);
        QVERIFY(c.scene.canvasState().moment().empty());
        QVERIFY(p.statusLabel()->text().contains(QStringLiteral("cluster changed")));
        // Restarting steps through it on the new cluster.
        QVERIFY(p.restart());
        QVERIFY(c.state.lesson());
        QCOMPARE(c.state.lesson()->topology, doc->topology().buildId());
        // A frame left from another topology is never shown.
        auto stale = std::make_shared<LessonFrame>(*c.state.lesson());
        stale->topology = 0;
        c.state.setLesson(stale);
        QVERIFY(!c.scene.canvasState().lesson);
    }

    // The seed's worked example in the Lesson: beside the realistic estimate, the textbook flat
    // ring the article computes (0.068 s for 14 GB in one 8-GPU server, 0.694 s across 16
    // servers), from the engine's flatRing(). Then the Guided Tour opens another layout: the
    // lesson ends with it (its GPUs and links were the old cluster's) and is no longer drawn.
    void textbookRingAndANewLayoutEndsTheLesson()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.action(QStringLiteral("actionGuidedTour"))->trigger();
        GuidedTourPanel *tour = w.tourPanel();
        int seed = -1, tp = -1;
        for (int i = 0; i < tour->scenarioCount(); ++i) {
            if (tour->scenario(i).id == "seed-worked-example")
                seed = i;
            if (tour->scenario(i).id == "tp-across-servers")
                tp = i;
        }
        QVERIFY(seed >= 0 && tp >= 0);
        tour->selectScenario(seed);
        QCOMPARE(w.document()->topology().gpuCount(), 128);
        w.action(QStringLiteral("actionCollectiveLesson"))->trigger();
        test::settle();
        LessonPanel &p = *w.lessonPanel();
        QVERIFY(p.hasLesson());
        // 14 GB, typed as a student types it.
        p.sizeEdit()->selectAll();
        QTest::keyClicks(p.sizeEdit(), QStringLiteral("14 GB"));
        QTest::keyClick(p.sizeEdit(), Qt::Key_Return);
        QVERIFY(p.hasLesson());
        QCOMPARE(p.lesson()->bytes, 14e9);
        QCOMPARE(p.lesson()->ranks, 8);
        const auto textbook = [&p] { return p.textbookLabel()->text(); };
        QVERIFY2(textbook().contains(QStringLiteral("0.068 s")), qPrintable(textbook()));
        QVERIFY(textbook().contains(QStringLiteral("Textbook flat ring")));
        RAILYARD_COMPARE_ABS(p.lesson()->textbook.timeS, 0.068, 0.0005);
        QVERIFY(textbook().contains(QStringLiteral("450 GB/s")));
        // The realistic estimate beside it, the engine's.
        QVERIFY(textbook().contains(QLocale().toString(p.lesson()->estimateS, 'f', 3)));
        // Data parallel across all 16 servers (DP group 0: 128 GPUs).
        p.chooseGroup(choiceStarting(p, QStringLiteral("DP group 0")));
        QVERIFY(p.hasLesson());
        QCOMPARE(p.lesson()->ranks, 128);
        // The article prints "~0.694": 2 x 127/128 x 14 GB / (50 GB/s x 80%) = 0.6945 s.
        RAILYARD_COMPARE_ABS(p.lesson()->textbook.timeS, 0.694, 0.001);
        QVERIFY2(textbook().contains(QLocale().toString(p.lesson()->textbook.timeS, 'f', 3)
                                     + QStringLiteral(" s")),
                 qPrintable(textbook()));
        QVERIFY(textbook().contains(QStringLiteral("50 GB/s")));
        QVERIFY(p.lesson()->textbook.timeS > 8 * p.lesson()->estimateS);
        QVERIFY(w.viewState()->lesson());

        // The tour opens the next scenario's layout: no lesson, nothing of it on the canvas.
        tour->selectScenario(tp);
        QCOMPARE(w.document()->layout().title, std::string("TP inside vs across servers"));
        test::settle();
        QVERIFY(!p.hasLesson());
        QVERIFY(!w.viewState()->lesson());
        QVERIFY(!w.scene()->canvasState().lesson);
        QVERIFY(p.textbookLabel()->text().isEmpty());
        QVERIFY2(p.statusLabel()->text().contains(QStringLiteral("Another layout opened")),
                 qPrintable(p.statusLabel()->text()));
        // Restart steps through it on this layout.
        QVERIFY(p.restart());
        QVERIFY(w.viewState()->lesson());
        QCOMPARE(w.viewState()->lesson()->topology, w.document()->topology().buildId());
    }

    // View > Collective Lesson (F4) shows the dock and the lesson; closing it ends it.
    void dockInTheMainWindow()
    {
        MainWindow w(nullptr, m_recovery.path());
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(w.openFile(test::layoutPath("gmi-h200-cluster.railyard.json")));
        QAction *toggle = test::menuAction(w,
                                           {QStringLiteral("View"),
                                            QStringLiteral("Collective Lesson")});
        QVERIFY(toggle);
        QCOMPARE(toggle->shortcut(), QKeySequence(Qt::Key_F4));
        QVERIFY(!w.lessonDock()->isVisible());
        QVERIFY(!w.viewState()->lesson());
        toggle->trigger();
        test::settle();
        QVERIFY(w.lessonDock()->isVisible());
        QVERIFY(w.lessonPanel()->hasLesson());
        QVERIFY(w.viewState()->lesson());
        QAction *forward = test::menuAction(w,
                                            {QStringLiteral("View"),
                                             QStringLiteral("Lesson Steps"),
                                             QStringLiteral("Lesson: Step Forward")});
        QVERIFY(forward);
        forward->trigger();
        QCOMPARE(w.lessonPanel()->step(), 1);
        if (qEnvironmentVariableIsSet("RAILYARD_SHOTS_DIR")) {
            // What a student sees: a ring step on one server, a hierarchical step across two.
            const QString dir = qEnvironmentVariable("RAILYARD_SHOTS_DIR");
            w.resize(1600, 1000);
            test::settle();
            w.lessonPanel()->restart();
            w.lessonPanel()->setStep(2);
            test::settle();
            w.grab().save(dir + QStringLiteral("/lesson-window-ring.png"));
            LessonPanel &p = *w.lessonPanel();
            p.groupBox()->setCurrentIndex(
                    choiceStarting(p, QStringLiteral("Across two servers: all")));
            chooseAlgorithm(p, engine::Algorithm::Hierarchical);
            p.setStep(7);
            test::settle();
            w.grab().save(dir + QStringLiteral("/lesson-window-hierarchical.png"));
            p.groupBox()->setCurrentIndex(choiceStarting(p, QStringLiteral("One server")));
            chooseAlgorithm(p, engine::Algorithm::Nvls);
            p.setStep(1);
            test::settle();
            w.grab().save(dir + QStringLiteral("/lesson-window-nvls.png"));
            p.groupBox()->setCurrentIndex(choiceStarting(p, QStringLiteral("DP group 0")));
            chooseAlgorithm(p, engine::Algorithm::Tree);
            p.setStep(std::min(p.stepCount() - 1, 7));
            test::settle();
            w.grab().save(dir + QStringLiteral("/lesson-window-tree.png"));
        }
        w.lessonDock()->close();
        test::settle();
        QVERIFY(!w.viewState()->lesson());
        QVERIFY(!w.scene()->canvasState().lesson);
    }
};

QTEST_MAIN(TestLessonPanel)
#include "tst_lessonpanel.moc"
