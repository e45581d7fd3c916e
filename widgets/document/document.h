#pragma once

#include "layout/layout.h"
#include "serving/servingevaluate.h"
#include "serving/servinggroups.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QFuture>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

class QUndoStack;
template<typename T>
class QFutureWatcher;

namespace railyard {

namespace engine {
class RankLayout;
} // namespace engine

// The open layout: the only owner of state. Views and panels read it and re-sync from its typed
// change signals; every edit goes through an undo command (widgets/commands/) on its stack, which
// hands the document a whole new Layout through setLayout().
//
// The document also owns the latest engine::Evaluation of its layout, recomputed after every
// change that can alter the numbers: widgets show it and never compute costs themselves. When
// the layout names no software stack, the stack range (step/stackrange.h: the step priced as
// each stack it may be running would run it, five more evaluations) is priced afterwards on
// another thread, so that an edit waits for the step alone; the band widens when it lands.
class Document : public QObject
{
    Q_OBJECT

public:
    // Throws engine::InputError if the cluster cannot be built (use load() or fromText() for
    // anything a user gave).
    explicit Document(engine::Layout layout, QObject *parent = nullptr);
    ~Document() override;

    // Reads a layout file. On failure returns nullptr and sets `error` to a message that names
    // the file, the place and what was expected.
    static std::unique_ptr<Document> load(const QString &path, QString *error);
    // Parses layout text (e.g. a built-in example); `name` is used in errors.
    static std::unique_ptr<Document> fromText(const QByteArray &text,
                                              const QString &name,
                                              QString *error);
    // A document for a layout made in the program (New Cluster); nullptr and `error` if the
    // layout would not survive a save and reopen.
    static std::unique_ptr<Document> create(const engine::Layout &layout, QString *error);

    // Why `layout` cannot be shown (the text a reopened file would give), or an empty string.
    // Editors call this before pushing a command, so a command never fails half way.
    static QString checkLayout(const engine::Layout &layout);

    const engine::Layout &layout() const { return m_layout; }
    const engine::Topology &topology() const { return *m_topology; }
    // The step as priced; while isStackRangePending(), its band is the validation band alone
    // (stackRange.stacks == 0, no "no-stack" warning), which widens when the range lands.
    const engine::Evaluation &evaluation() const { return m_evaluation; }
    // Whether the stack range of evaluation() is still being priced on another thread.
    bool isStackRangePending() const { return m_rangePending; }
    // Finishes the pending stack range now (waits for it on this thread) and merges it, as
    // evaluate() with EvaluateOptions::stackRange would have: for anything that writes the
    // numbers out (an export, a report, a pin). Emits stackRangeChanged when it merged.
    void ensureStackRange();
    // evaluation() once ensureStackRange() has run: the band every export must show.
    const engine::Evaluation &evaluationWithStackRange()
    {
        ensureStackRange();
        return m_evaluation;
    }
    // A serving layout (one with `serving`) is priced by the serving engine instead: TTFT,
    // TPOT, throughput, memory. Null for a training layout (whose evaluation() then says
    // nothing of serving); for a serving layout evaluation() holds only the training engine's
    // refusal, and the views read what both kinds share through linkLoads() and timeline().
    bool isServing() const { return m_layout.isServing(); }
    const engine::ServingEvaluation *servingEvaluation() const
    {
        return m_serving ? &*m_serving : nullptr;
    }
    // The serving evaluation before the last change (null until something changed, or when
    // the layout before it did not serve).
    const engine::ServingEvaluation *previousServingEvaluation() const
    {
        return m_previousServing ? &*m_previousServing : nullptr;
    }
    // Whether the numbers are priced: the training step's, or the serving engine's.
    bool isPriced() const { return m_serving ? m_serving->ok : m_evaluation.ok; }
    // Why not (when !isPriced()), naming the key.
    std::string pricingError() const { return m_serving ? m_serving->error : m_evaluation.error; }
    // The load on every link that the canvas and the hottest links show: over one training
    // step, or one decode step of every decode replica when the layout serves. Null when not
    // priced.
    std::shared_ptr<const engine::LinkLoads> linkLoads() const;
    // The timeline that playback plays: one training step, or one decode step when the layout
    // serves (servingEvaluation()->requestTimeline holds one request's life).
    const engine::StepTimeline &timeline() const;
    // The job's ranks (which GPU each rank runs on, its groups), rebuilt when the cluster, the
    // workload or the mapping change (ranksChanged); null when the parallel sizes do not
    // describe the cluster (the evaluation says why).
    const engine::RankLayout *ranks() const { return m_ranks.get(); }
    // A serving layout's groups as the serving engine places them (each pool's TP and EP
    // groups, stages, replicas, and the pools), rebuilt with ranks(); null for training.
    const engine::ServingGpuGroups *servingGroups() const
    {
        return m_servingGroups ? &*m_servingGroups : nullptr;
    }
    // Why there are no ranks (the sizes against the GPU count); empty when ranks() is set.
    const std::string &ranksError() const { return m_ranksError; }
    // The evaluation before the last change (an edit, an undo or a redo), to say what the change
    // did ("+41% step time"); null until something changed.
    const engine::Evaluation *previousEvaluation() const
    {
        return m_previous ? &*m_previous : nullptr;
    }

    // A state pinned for A/B comparison: the layout and its numbers when it was pinned, and
    // the document it came from. Not an edit (nothing in the file changes), so not on the undo
    // stack. A pin outlives its document: the window hands it to the next one it opens
    // (setPinned), so A can be one file and B another.
    struct Snapshot
    {
        engine::Layout layout;
        engine::Evaluation evaluation;
        // The serving numbers when the pinned layout serves.
        std::shared_ptr<const engine::ServingEvaluation> serving;
        QString source;     // where A came from: the file's (or example's) name, else the title
        QString sourcePath; // the file's path (":/layouts/..." for an example); else empty
    };
    const Snapshot *pinned() const { return m_pinned ? &*m_pinned : nullptr; }
    void pin();
    void unpin();
    // Takes over a pin made in another document (the one this document replaces).
    void setPinned(const Snapshot &snapshot);
    QUndoStack *undoStack() const { return m_undoStack; }

    // Replaces the layout and emits a signal for each part that changed. For undo commands.
    void setLayout(const engine::Layout &layout);
    // Prices `variant`, a layout on this document's cluster (another mapping or workload, say),
    // with the document's topology and workspace: for previews that are not edits.
    engine::Evaluation evaluateVariant(const engine::Layout &variant,
                                       const engine::EvaluateOptions &options) const;
    // The layout's "view" settings (colouring, link-load view): they never affect the numbers,
    // so changing them is not an edit (no undo step, no signal); they are written on save.
    void setView(const engine::Json &view);

    QString filePath() const { return m_filePath; }
    void setFilePath(const QString &path);
    QString displayName() const;
    bool isModified() const;
    // After restoring a recovery file: modified until saved, even with an empty undo stack.
    void markModified();

    QByteArray toText() const;
    // Writes atomically (writeFileAtomically): on failure (a full disk, say) returns false,
    // sets `error` to a message naming the file and the system's reason, and leaves the file
    // on disk, the modified mark and so the recovery copy as they were.
    bool save(const QString &path, QString *error);

    // Whether the file at filePath() now differs from what this document last read from it or
    // wrote to it: another program, or another Railyard window, saved over it. Compared by
    // size and content (a touch that changes only the time is no change). A file that is gone
    // is no change (saving loses nothing), a file that is no longer a regular file is one.
    bool changedOnDisk() const;
    // What the document knows of its file ("size:sha256" in hex; empty when it never read or
    // wrote it), kept with a recovery copy so that the restored work still notices a change.
    QString diskFingerprint() const;
    void setDiskFingerprint(const QString &fingerprint);

Q_SIGNALS:
    void titleChanged(); // title or notes
    // The cluster, and so the topology; always followed by ranksChanged and evaluationChanged.
    void clusterChanged();
    void workloadChanged(); // model, training or parallel sizes
    void mappingChanged();  // the rank -> GPU mapping
    // ranks() was rebuilt: a new cluster, workload or mapping. Emitted after clusterChanged
    // and before workloadChanged and mappingChanged; all of them find the new ranks in place.
    void ranksChanged();
    void evaluationChanged();
    // The stack range landed: evaluation()'s band, its basis, its assumption line and its
    // warnings ("no-stack") changed, nothing else; isStackRangePending() is false. Not emitted
    // for a range an edit made stale (a later evaluation replaced the one it was for).
    void stackRangeChanged();
    void filePathChanged();
    void modifiedChanged(bool modified);
    void pinnedChanged();

private:
    void evaluate();
    // Prices the stack range of the evaluation just made on the global thread pool, unless it
    // has none (a stack named, a serving layout, a step that cannot be priced).
    void startStackRange();
    // Merges the range when its computation is finished and still for the current evaluation.
    void landStackRange();
    void buildRanks();
    // What the file held when this document last read or wrote it.
    void setDiskState(const QByteArray &contents);

    engine::Layout m_layout;
    // Shared with a stack range being priced on another thread (which reads it only).
    std::shared_ptr<const engine::Topology> m_topology;
    // Scratch space of every evaluation: as large as the topology, kept so that an edit does
    // not allocate it again. Previews from a const document use it too: it holds no state.
    mutable engine::EvaluationWorkspace m_workspace;
    std::unique_ptr<engine::RankLayout> m_ranks;
    std::string m_ranksError;
    std::optional<engine::ServingGpuGroups> m_servingGroups;
    engine::Evaluation m_evaluation;
    // Which evaluation m_evaluation is (one more at each evaluate()), so that a stack range
    // priced for an earlier one is never merged into it.
    quint64 m_generation = 0;
    struct PricedRange
    {
        quint64 generation = 0;
        engine::StackRange range;
    };
    QFuture<PricedRange> m_range;
    QFutureWatcher<PricedRange> *m_rangeWatcher;
    // The stack ranges' own workspace, one range at a time in it (document.cpp), kept so that
    // a range does not allocate it again (200 ms at 131,072 GPUs).
    struct RangeScratch;
    std::shared_ptr<RangeScratch> m_rangeScratch;
    bool m_rangePending = false;
    std::optional<engine::Evaluation> m_previous;
    std::optional<engine::ServingEvaluation> m_serving;
    std::optional<engine::ServingEvaluation> m_previousServing;
    std::optional<Snapshot> m_pinned;
    QUndoStack *m_undoStack;
    QString m_filePath;
    QString m_origin; // what load() read, a shipped example's resource path included
    struct DiskState
    {
        bool known = false;
        qint64 size = 0;
        QByteArray hash;
    };
    DiskState m_disk;
};

} // namespace railyard
