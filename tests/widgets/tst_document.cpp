// The document and its undo commands: every edit undoes and redoes to the same JSON, merges
// where a drag makes many edits, keeps unknown keys, saves atomically and reopens identically;
// bad files are refused with the engine's message; autosave and recovery.
#include "base/jsoncursor.h"
#include "commands/changecluster.h"
#include "commands/changemapping.h"
#include "commands/changenotes.h"
#include "commands/changeparallelsizes.h"
#include "commands/changetitle.h"
#include "commands/changeworkload.h"
#include "document/autosaver.h"
#include "document/document.h"
#include "document/viewstate.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <functional>
#include <tuple>

#include <sys/stat.h>

using namespace railyard;

namespace {

std::unique_ptr<Document> openLayout(const QString &path)
{
    QString error;
    auto doc = Document::load(path, &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

QString layoutPath(const char *name)
{
    return QStringLiteral(RAILYARD_SOURCE_DIR "/layouts/") + QLatin1String(name);
}

std::string text(const Document &doc)
{
    return engine::layoutToText(doc.layout());
}

using Edit = std::function<QUndoCommand *(Document *)>;

} // namespace

Q_DECLARE_METATYPE(Edit)

class TestDocument : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void undoRedoRestoresTheSameJson_data()
    {
        QTest::addColumn<Edit>("edit");
        QTest::newRow("ChangeCluster: servers") << Edit([](Document *d) {
            engine::ClusterConfig c = d->layout().cluster;
            c.nodes = 32;
            return new ChangeCluster(d, c, QStringLiteral("servers"));
        });
        QTest::newRow("ChangeCluster: GPU and fabric") << Edit([](Document *d) {
            engine::ClusterConfig c = d->layout().cluster;
            c.gpu = "H100-SXM";
            c.fabric.oversubscription = 2;
            c.fabric.sharp = true;
            c.nic.gbitPerS = 200;
            c.nic.model.clear();
            return new ChangeCluster(d, c, QStringLiteral("fabric"));
        });
        QTest::newRow("ChangeTitle") << Edit(
                [](Document *d) { return new ChangeTitle(d, QStringLiteral("A new title")); });
        QTest::newRow("ChangeNotes") << Edit([](Document *d) {
            return new ChangeNotes(d, QStringLiteral("Some notes\nover two lines"));
        });
        QTest::newRow("ChangeWorkload") << Edit([](Document *d) {
            engine::TrainingConfig t = d->layout().training;
            t.seqLen = 4096;
            t.precision = engine::Precision::Fp8;
            engine::ModelConfig m;
            m.preset = "llama3-8b";
            return new ChangeWorkload(d, m, t, QStringLiteral("workload"));
        });
        QTest::newRow("ChangeParallelSizes") << Edit([](Document *d) {
            engine::ParallelConfig p = d->layout().parallel;
            p.tp = 4;
            p.pp = 8;
            p.vp = 1;
            p.dp = 4;
            return new ChangeParallelSizes(d, p);
        });
        QTest::newRow("ChangeMapping") << Edit([](Document *d) {
            std::vector<int> mapping(128);
            for (int i = 0; i < 128; ++i)
                mapping[static_cast<std::size_t>(i)] = 127 - i;
            return new ChangeMapping(d, mapping, QStringLiteral("reverse"));
        });
    }

    void undoRedoRestoresTheSameJson()
    {
        QFETCH(Edit, edit);
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        const std::string before = text(*doc);
        QUndoCommand *command = edit(doc.get());
        QVERIFY(Document::checkLayout(static_cast<LayoutCommand *>(command)->after()).isEmpty());
        doc->undoStack()->push(command);
        const std::string after = text(*doc);
        QVERIFY(after != before);
        QVERIFY(doc->isModified());
        doc->undoStack()->undo();
        QCOMPARE(text(*doc), before);
        QVERIFY(!doc->isModified());
        doc->undoStack()->redo();
        QCOMPARE(text(*doc), after);
        // The topology follows the layout both ways.
        QCOMPARE(doc->topology().gpuCount(), doc->layout().cluster.gpuCount());
    }

    void signalsNameWhatChanged()
    {
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        QSignalSpy cluster(doc.get(), &Document::clusterChanged);
        QSignalSpy title(doc.get(), &Document::titleChanged);
        QSignalSpy workload(doc.get(), &Document::workloadChanged);
        QSignalSpy evaluation(doc.get(), &Document::evaluationChanged);
        doc->undoStack()->push(new ChangeTitle(doc.get(), QStringLiteral("x")));
        QCOMPARE(title.count(), 1);
        QCOMPARE(cluster.count(), 0);
        QCOMPARE(evaluation.count(), 0); // a title never changes the numbers
        engine::ClusterConfig c = doc->layout().cluster;
        c.nodes = 8;
        doc->undoStack()->push(new ChangeCluster(doc.get(), c, QStringLiteral("servers")));
        QCOMPARE(cluster.count(), 1);
        QCOMPARE(evaluation.count(), 1);
        QCOMPARE(doc->topology().gpuCount(), 64);
        QCOMPARE(workload.count(), 1); // DP followed the cluster: 4 -> 2
        QCOMPARE(*doc->layout().parallel.dp, 2);
        doc->undoStack()->undo();
        QCOMPARE(doc->topology().gpuCount(), 128);
        QCOMPARE(*doc->layout().parallel.dp, 4);
    }

    void evaluationFollowsEdits()
    {
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        // Whatever the engine says now, the document holds what evaluate() gives for its state.
        const engine::Evaluation fresh = engine::evaluate(doc->layout(), doc->topology());
        QCOMPARE(doc->evaluation().ok, fresh.ok);
        QCOMPARE(doc->evaluation().stepTimeS, fresh.stepTimeS);
        QCOMPARE(doc->evaluation().error, fresh.error);
        engine::ClusterConfig c = doc->layout().cluster;
        c.nic.gbitPerS = 200;
        c.nic.model.clear();
        doc->undoStack()->push(new ChangeCluster(doc.get(), c, QStringLiteral("nic")));
        const engine::Evaluation slower = engine::evaluate(doc->layout(), doc->topology());
        QCOMPARE(doc->evaluation().ok, slower.ok);
        QCOMPARE(doc->evaluation().stepTimeS, slower.stepTimeS);
    }

    void dragEditsMergeIntoOneStep()
    {
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        const std::string start = text(*doc);
        engine::ClusterConfig c = doc->layout().cluster;
        for (double o : {1.5, 2.0, 2.5, 3.0}) {
            c.fabric.oversubscription = o;
            doc->undoStack()->push(new ChangeCluster(doc.get(),
                                                     c,
                                                     QStringLiteral("oversubscription"),
                                                     QStringLiteral("fabric.oversubscription")));
        }
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->layout().cluster.fabric.oversubscription, 3.0);
        // A different field starts a new step.
        c.fabric.sharp = true;
        doc->undoStack()->push(
                new ChangeCluster(doc.get(), c, QStringLiteral("sharp"), QStringLiteral("sharp")));
        QCOMPARE(doc->undoStack()->count(), 2);
        doc->undoStack()->undo();
        doc->undoStack()->undo();
        QCOMPARE(text(*doc), start);

        // Typing a title is one step; a drag of a mapping with one drag id is one step.
        for (const char *t : {"L", "Ll", "Lla"})
            doc->undoStack()->push(new ChangeTitle(doc.get(), QString::fromLatin1(t)));
        QCOMPARE(doc->undoStack()->count(), 1);
        std::vector<int> m(128);
        for (int step = 0; step < 3; ++step) {
            for (int i = 0; i < 128; ++i)
                m[static_cast<std::size_t>(i)] = (i + step + 1) % 128;
            doc->undoStack()->push(new ChangeMapping(doc.get(), m, QStringLiteral("drag"), 7));
        }
        QCOMPARE(doc->undoStack()->count(), 2);
    }

    void draggedBackToTheStartLeavesNoStep()
    {
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        engine::ClusterConfig c = doc->layout().cluster;
        const int nodes = c.nodes;
        for (int n : {nodes + 1, nodes + 2, nodes}) {
            c.nodes = n;
            doc->undoStack()->push(new ChangeCluster(doc.get(),
                                                     c,
                                                     QStringLiteral("servers"),
                                                     QStringLiteral("nodes")));
        }
        QCOMPARE(doc->undoStack()->count(), 0);
        QVERIFY(!doc->isModified());
    }

    void unknownKeysSurviveEditsAndSave()
    {
        QFile f(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray json = f.readAll();
        json.replace("\"title\"", "\"x_review\": {\"owner\": \"infra\"}, \"title\"");
        json.replace("\"gpu\": \"H200-SXM\"", "\"gpu\": \"H200-SXM\", \"x_site\": \"eu-1\"");
        QString error;
        auto doc = Document::fromText(json, QStringLiteral("custom"), &error);
        QVERIFY2(doc, qPrintable(error));
        engine::ClusterConfig c = doc->layout().cluster;
        c.nodes = 4;
        doc->undoStack()->push(new ChangeCluster(doc.get(), c, QStringLiteral("servers")));
        doc->undoStack()->push(new ChangeTitle(doc.get(), QStringLiteral("Edited")));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("custom.railyard.json"));
        QVERIFY2(doc->save(path, &error), qPrintable(error));
        auto reopened = Document::load(path, &error);
        QVERIFY2(reopened, qPrintable(error));
        const engine::Json &orig = reopened->layout().original.get();
        QCOMPARE(QString::fromStdString(orig["x_review"]["owner"].get<std::string>()),
                 QStringLiteral("infra"));
        QCOMPARE(QString::fromStdString(orig["cluster"]["x_site"].get<std::string>()),
                 QStringLiteral("eu-1"));
        QCOMPARE(reopened->layout().cluster.nodes, 4);
        QCOMPARE(QString::fromStdString(reopened->layout().title), QStringLiteral("Edited"));
    }

    void saveAndReopenIsIdentical_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts"));
        for (const QString &name : dir.entryList({QStringLiteral("*.railyard.json")}))
            QTest::newRow(qPrintable(name)) << dir.filePath(name);
        QVERIFY(dir.entryList({QStringLiteral("*.railyard.json")}).size() >= 7);
    }

    void saveAndReopenIsIdentical()
    {
        QFETCH(QString, path);
        auto doc = openLayout(path);
        QVERIFY(doc);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("copy.railyard.json"));
        QString error;
        QVERIFY2(doc->save(out, &error), qPrintable(error));
        QCOMPARE(doc->filePath(), QFileInfo(out).absoluteFilePath());
        QVERIFY(!doc->isModified());
        auto again = openLayout(out);
        QVERIFY(again);
        QCOMPARE(text(*again), text(*doc));
        QVERIFY(again->layout().sameContent(doc->layout()));
        // Nothing but the saved file is left in the folder (QSaveFile renamed its temporary).
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
    }

    void saveToAnUnwritablePlaceFails()
    {
        auto doc = openLayout(layoutPath("hgx-h100-server.railyard.json"));
        QVERIFY(doc);
        QString error;
        QVERIFY(!doc->save(QStringLiteral("/nonexistent-dir/x.railyard.json"), &error));
        QVERIFY(error.contains(QStringLiteral("/nonexistent-dir/x.railyard.json")));
        QCOMPARE(doc->filePath(),
                 QFileInfo(layoutPath("hgx-h100-server.railyard.json")).absoluteFilePath());
    }

    void badFilesGiveTheEnginesMessage_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("where");
        QTest::newRow("broken json") << "broken-json"
                                     << "line 5, column 1";
        QTest::newRow("empty") << "empty"
                               << "empty";
        QTest::newRow("future version") << "future-version"
                                        << "/version";
        QTest::newRow("negative nodes") << "negative-nodes"
                                        << "/cluster/nodes";
        QTest::newRow("billion GPUs") << "billion-gpus"
                                      << "262144";
        QTest::newRow("missing nodes") << "missing-nodes"
                                       << "\"nodes\"";
        QTest::newRow("not an object") << "not-an-object"
                                       << "expected an object";
        QTest::newRow("unknown GPU") << "unknown-gpu"
                                     << "/cluster/gpu";
        QTest::newRow("wrong type") << "wrong-type"
                                    << "/cluster/nodes";
        // Hostile files (issue 8): File > Open reads through the same loader, and survives.
        QTest::newRow("view nested 100,000 deep") << "deep-view"
                                                  << "line 2, column 81";
        QTest::newRow("unknown key nested 100,000 deep") << "deep-unknown"
                                                         << "deeper than 64";
        QTest::newRow("1e400") << "number-overflow"
                               << "line 1, column 12";
        QTest::newRow("duplicate key") << "duplicate-key"
                                       << "duplicate key \"nodes\"";
        QTest::newRow("NUL bytes") << "nul-bytes"
                                   << "NUL byte";
        QTest::newRow("invalid UTF-8") << "invalid-utf8"
                                       << "line 2, column 16";
    }

    // A FIFO with no writer, or a directory, is refused at once (a FIFO used to block the GUI).
    void specialFilesAreRefused()
    {
        QTemporaryDir dir;
        const QString fifo = dir.filePath(QStringLiteral("fifo.railyard.json"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        QString error;
        QVERIFY(!Document::load(fifo, &error));
        QVERIFY2(error.contains(fifo + QStringLiteral(": is a FIFO")), qPrintable(error));
        QVERIFY(!Document::load(dir.path(), &error));
        QVERIFY2(error.contains(dir.path() + QStringLiteral(": is a directory")), qPrintable(error));
    }

    void badFilesGiveTheEnginesMessage()
    {
        QFETCH(QString, file);
        QFETCH(QString, where);
        const QString path = QStringLiteral(RAILYARD_TEST_DATA "/bad/") + file
                             + QStringLiteral(".railyard.json");
        QString error;
        auto doc = Document::load(path, &error);
        QVERIFY(!doc);
        QVERIFY2(error.contains(file), qPrintable(error));
        QVERIFY2(error.contains(where), qPrintable(error));
    }

    void checkLayoutRefusesWhatAFileCannotHold()
    {
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        engine::Layout l = doc->layout();
        l.cluster.nvlinkDomain = 12; // not a multiple of 8 GPUs per server
        QVERIFY(Document::checkLayout(l).contains(QStringLiteral("nvlink_domain")));
        l = doc->layout();
        l.cluster.nodes = 40000; // 320,000 GPUs
        QVERIFY(Document::checkLayout(l).contains(QStringLiteral("262144")));
        QVERIFY(Document::checkLayout(doc->layout()).isEmpty());
    }

    void autosaveWritesOnlyUnsavedWork()
    {
        QTemporaryDir dir;
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        AutoSaver saver(dir.path());
        QCOMPARE(saver.interval(), 60 * 1000);
        saver.setDocument(doc.get());
        QVERIFY(!saver.saveNow()); // nothing unsaved
        QVERIFY(!QFile::exists(saver.recoveryFile()));
        doc->undoStack()->push(new ChangeTitle(doc.get(), QStringLiteral("Unsaved")));
        QVERIFY(saver.saveNow());
        QFile f(saver.recoveryFile());
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll().toStdString(), text(*doc));
        f.close();
        QVERIFY(!saver.saveNow()); // already written
        // A running session's file is not an orphan.
        QVERIFY(AutoSaver::orphans(dir.path()).isEmpty());
        // Saving removes the recovery file.
        QString error;
        QVERIFY(doc->save(dir.filePath(QStringLiteral("saved.railyard.json")), &error));
        QVERIFY(!QFile::exists(saver.recoveryFile()));
    }

    void autosaveWritesTheColouringShownNow()
    {
        // The colouring is the view state's; the recovery copy must not carry the one of the
        // last save (issue 18).
        QTemporaryDir dir;
        auto doc = openLayout(layoutPath("gmi-h200-cluster.railyard.json"));
        QVERIFY(doc);
        ViewState view(doc.get());
        view.readLayoutView(doc->layout().view.get());
        AutoSaver saver(dir.path());
        saver.setDocument(doc.get());
        const auto recovered = [&] {
            QFile f(saver.recoveryFile());
            if (!f.open(QIODevice::ReadOnly))
                return engine::Json();
            return engine::Json::parse(f.readAll().toStdString()).value("view", engine::Json());
        };
        for (const auto &[kind, key, load] :
             {std::tuple(GroupKind::PpStage, "pp", true), std::tuple(GroupKind::Tp, "tp", false)}) {
            view.setColourBy(kind);
            view.setLinkLoad(load);
            doc->undoStack()->push(new ChangeTitle(doc.get(), QString::fromLatin1(key)));
            QVERIFY(saver.saveNow());
            const engine::Json v = recovered();
            QCOMPARE(QString::fromStdString(v.value("color_by", std::string())),
                     QString::fromLatin1(key));
            QCOMPARE(v.value("link_load", !load), load);
        }
        // Plain colouring is written as "none", and read back as none.
        view.setColourBy(std::nullopt);
        doc->undoStack()->push(new ChangeTitle(doc.get(), QStringLiteral("plain")));
        QVERIFY(saver.saveNow());
        QCOMPARE(QString::fromStdString(recovered().value("color_by", std::string())),
                 QStringLiteral("none"));
        ViewState reread(doc.get());
        reread.setColourBy(GroupKind::Tp);
        reread.readLayoutView(recovered());
        QCOMPARE(reread.colourBy(), std::nullopt);
        QCOMPARE(reread.linkLoad(), false);
        // Other view keys (the window's zoom) are kept as they were.
        engine::Json withZoom = {{"zoom", 0.5}};
        view.writeLayoutView(withZoom);
        QCOMPARE(withZoom.value("zoom", 0.0), 0.5);
        QCOMPARE(QString::fromStdString(withZoom.value("color_by", std::string())),
                 QStringLiteral("none"));
    }

    void orphanedRecoveryFilesAreFound()
    {
        QTemporaryDir dir;
        // What a crashed session leaves: the layout and its note, no live lock.
        QFile::copy(layoutPath("gmi-h200-cluster.railyard.json"),
                    dir.filePath(QStringLiteral("session-1-2.recovery.railyard.json")));
        QFile meta(dir.filePath(QStringLiteral("session-1-2.recovery.meta.json")));
        QVERIFY(meta.open(QIODevice::WriteOnly));
        meta.write(R"({"original": "/home/u/gmi.railyard.json", "title": "gmi"})");
        meta.close();
        const auto found = AutoSaver::orphans(dir.path());
        QCOMPARE(found.size(), 1);
        QCOMPARE(found.front().originalPath, QStringLiteral("/home/u/gmi.railyard.json"));
        AutoSaver::remove(found.front());
        QVERIFY(AutoSaver::orphans(dir.path()).isEmpty());
    }
};

QTEST_MAIN(TestDocument)
#include "tst_document.moc"
