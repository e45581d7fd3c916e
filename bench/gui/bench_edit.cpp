// A workload edit (the sequence length) of a layout that names no software stack, at 16,384
// and 131,072 GPUs: what the edit costs the GUI thread now (the step priced, the stack range
// left to another thread), how long after it the range lands, and the edit with the range
// finished before it returns (what every edit cost while the range was priced synchronously).
// The document alone, no views. Prints medians.
//   QT_QPA_PLATFORM=offscreen bench_edit [runs]
#include "benchtimes.h"
#include "commands/changeworkload.h"
#include "document/document.h"
#include "step/evaluate.h"
#include "step/workspace.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QUndoStack>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <vector>

using namespace railyard;
using namespace railyard::benchtimes;

namespace {

void edit(Document &doc)
{
    engine::TrainingConfig t = doc.layout().training;
    t.seqLen = t.seqLen == 8192 ? 4096 : 8192;
    doc.undoStack()->push(new ChangeWorkload(&doc, doc.layout().model, t, QStringLiteral("seq")));
}

void bench(const char *label, const QByteArray &json, int runs)
{
    QString error;
    auto doc = Document::fromText(json, QStringLiteral("bench"), &error);
    if (!doc)
        qFatal("%s", qPrintable(error));
    if (!doc->layout().training.stack.empty())
        qFatal("the layout names a stack");
    doc->ensureStackRange();
    Times now, before;
    std::vector<double> lands;
    for (int i = 0; i < runs; ++i) {
        now.run([&] { edit(*doc); });
        lands.push_back(timeMs([&] {
            while (doc->isStackRangePending())
                QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
        }));
        before.run([&] {
            edit(*doc);
            doc->ensureStackRange();
        });
    }
    // The engine's part of each on this thread: the step alone (now), and with the range
    // (before).
    engine::EvaluationWorkspace workspace;
    Times plain, ranged;
    engine::EvaluateOptions on;
    on.stackRange = true;
    for (int i = 0; i < runs; ++i) {
        plain.run([&] { engine::evaluate(doc->layout(), doc->topology(), workspace); });
        ranged.run([&] { engine::evaluate(doc->layout(), doc->topology(), workspace, on); });
    }
    std::printf("%s, median of %d (wall, and the GUI thread's CPU):\n"
                "  edit (now)                              %8.1f ms (cpu %8.1f ms)\n"
                "  then the range lands after              %8.1f ms (another thread)\n"
                "  edit, the range finished before return  %8.1f ms\n"
                "  engine on the GUI thread: evaluate      %8.1f ms (cpu %8.1f ms)\n"
                "  engine: evaluate with the stack range   %8.1f ms (cpu %8.1f ms; before)\n",
                label,
                runs,
                median(now.wall),
                median(now.cpu),
                median(lands),
                median(before.wall),
                median(plain.wall),
                median(plain.cpu),
                median(ranged.wall),
                median(ranged.cpu));
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const QByteArray big = readLayout(QStringLiteral("llama3.1-405b-16k-h100.railyard.json"));
    bench("16,384 GPUs (llama3.1-405b-16k-h100)", big, runs);
    bench("131,072 GPUs (the same job, DP 1,024)",
          withNodes(big, 16384, 1024),
          std::max(1, runs / 2));
    return 0;
}
