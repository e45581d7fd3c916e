#include "document.h"

#include "base/inputerror.h"
#include "layout/parallel.h"
#include "safesave.h"
#include "step/stackrange.h"
#include "step/workspace.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QPromise>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <mutex>

namespace railyard {

namespace {

QString errorText(const std::exception &e)
{
    return QString::fromStdString(e.what());
}

QByteArray hashOf(const QByteArray &bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256);
}

// Larger than any layout the engine would read: such a file is a change without reading it.
constexpr qint64 kMaxCompared = qint64(64) << 20;

} // namespace

// Scratch space of the stack ranges, which run on the thread pool: one at a time (a range an
// edit cancelled stops between two stacks and hands it on), never the document's own.
struct Document::RangeScratch
{
    std::mutex mutex;
    engine::EvaluationWorkspace workspace;
};

Document::Document(engine::Layout layout, QObject *parent)
    : QObject(parent)
    , m_layout(std::move(layout))
    , m_topology(std::make_shared<const engine::Topology>(
              engine::buildTopology(m_layout.cluster, engine::Catalog::builtin())))
    , m_rangeWatcher(new QFutureWatcher<PricedRange>(this))
    , m_rangeScratch(std::make_shared<RangeScratch>())
    , m_undoStack(new QUndoStack(this))
{
    connect(m_undoStack, &QUndoStack::cleanChanged, this, [this](bool clean) {
        Q_EMIT modifiedChanged(!clean);
    });
    connect(m_rangeWatcher, &QFutureWatcher<PricedRange>::finished, this, &Document::landStackRange);
    buildRanks();
    evaluate();
}

Document::~Document()
{
    // A range still being priced reads only its own copies and the shared topology, but the
    // pool must not outlive it running: ask it to stop (it stops between two stacks) and wait.
    m_range.cancel();
    m_range.waitForFinished();
}

std::unique_ptr<Document> Document::fromText(const QByteArray &text,
                                             const QString &name,
                                             QString *error)
{
    try {
        engine::Layout layout = engine::parseLayout(text.toStdString(), name.toStdString());
        return std::make_unique<Document>(std::move(layout));
    } catch (const engine::InputError &e) {
        if (error)
            *error = errorText(e);
    } catch (const std::bad_alloc &) {
        if (error)
            *error = name + tr(": the layout is too large to open");
    } catch (const std::exception &e) {
        if (error)
            *error = name + QStringLiteral(": ") + errorText(e);
    }
    return nullptr;
}

std::unique_ptr<Document> Document::load(const QString &path, QString *error)
{
    QByteArray text;
    if (path.startsWith(QLatin1Char(':'))) { // a shipped example, compiled in
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            if (error)
                *error = path + tr(": cannot open: ") + file.errorString();
            return nullptr;
        }
        text = file.readAll();
    } else {
        // The engine refuses directories, FIFOs (which would block) and oversized files.
        try {
            text = QByteArray::fromStdString(
                    engine::readLayoutText(QFile::encodeName(path).toStdString()));
        } catch (const engine::InputError &e) {
            if (error)
                *error = errorText(e);
            return nullptr;
        }
    }
    auto doc = fromText(text, path, error);
    if (doc)
        doc->m_origin = path;
    if (doc && !path.startsWith(QLatin1Char(':'))) {
        doc->setFilePath(QFileInfo(path).absoluteFilePath());
        doc->setDiskState(text);
    }
    return doc;
}

std::unique_ptr<Document> Document::create(const engine::Layout &layout, QString *error)
{
    const QString problem = checkLayout(layout);
    if (!problem.isEmpty()) {
        if (error)
            *error = problem;
        return nullptr;
    }
    return std::make_unique<Document>(layout);
}

QString Document::checkLayout(const engine::Layout &layout)
{
    // The file format is the contract: what the parser refuses in a file is refused here too.
    try {
        const engine::Layout reread = engine::parseLayout(engine::layoutToText(layout), "layout");
        engine::buildTopology(reread.cluster, engine::Catalog::builtin());
    } catch (const engine::InputError &e) {
        return errorText(e);
    } catch (const std::bad_alloc &) {
        return tr("the cluster is too large to build");
    }
    return {};
}

void Document::setLayout(const engine::Layout &layout)
{
    const bool title = layout.title != m_layout.title || layout.notes != m_layout.notes;
    const bool cluster = !(layout.cluster == m_layout.cluster);
    const bool workload = layout.model != m_layout.model || !(layout.training == m_layout.training)
                          || layout.serving != m_layout.serving
                          || !(layout.parallel == m_layout.parallel);
    const bool mapping = layout.mapping != m_layout.mapping;
    if (cluster) {
        // Commands check their layout first (checkLayout), so this does not throw in practice;
        // if it did, the document keeps its old state whole.
        auto topology = std::make_shared<const engine::Topology>(
                engine::buildTopology(layout.cluster, engine::Catalog::builtin()));
        m_topology = std::move(topology);
    }
    m_layout = layout;
    if (cluster || workload || mapping) {
        buildRanks();
        m_previous = std::move(m_evaluation);
        m_previousServing = std::move(m_serving);
        evaluate();
    }
    if (title)
        Q_EMIT titleChanged();
    if (cluster)
        Q_EMIT clusterChanged();
    if (cluster || workload || mapping)
        Q_EMIT ranksChanged();
    if (workload)
        Q_EMIT workloadChanged();
    if (mapping)
        Q_EMIT mappingChanged();
    if (cluster || workload || mapping)
        Q_EMIT evaluationChanged();
}

void Document::buildRanks()
{
    m_ranks.reset();
    m_ranksError.clear();
    m_servingGroups.reset();
    if (m_layout.isServing())
        m_servingGroups = engine::servingGpuGroups(m_layout, m_topology->gpuCount());
    try {
        m_ranks = std::make_unique<engine::RankLayout>(m_layout);
    } catch (const engine::InputError &e) {
        // Sizes that do not fill the cluster: no ranks (the evaluation says why).
        m_ranksError = e.what();
    }
}

void Document::evaluate()
{
    // Whatever range is being priced is for the evaluation this one replaces.
    ++m_generation;
    m_range.cancel();
    m_rangePending = false;
    m_serving.reset();
    try {
        // The stack range comes later, off this thread (startStackRange).
        m_evaluation = engine::evaluate(m_layout, *m_topology, m_workspace);
    } catch (const std::exception &e) {
        // The engine promises not to throw for a bad configuration; a bug still must not take
        // the window down.
        m_evaluation = engine::Evaluation{};
        m_evaluation.error = e.what();
    }
    if (!m_layout.isServing()) {
        startStackRange();
        return;
    }
    try {
        m_serving = engine::evaluateServing(m_layout, *m_topology, m_workspace);
    } catch (const std::exception &e) {
        m_serving = engine::ServingEvaluation{};
        m_serving->error = e.what();
    }
}

void Document::startStackRange()
{
    if (!m_evaluation.ok || !m_layout.training.stack.empty())
        return;
    // Copies and a shared topology: the document may be edited, its topology replaced, or the
    // document closed while the range is priced. A workspace of the ranges' own (the
    // document's is this thread's scratch space).
    const auto price = [layout = m_layout,
                        topology = m_topology,
                        scratch = m_rangeScratch,
                        generation = m_generation](QPromise<PricedRange> &promise) {
        PricedRange out;
        out.generation = generation;
        try {
            const std::lock_guard<std::mutex> lock(scratch->mutex);
            out.range = engine::evaluateStackRange(layout, *topology, scratch->workspace, [&] {
                return promise.isCanceled();
            });
        } catch (const std::exception &) {
            out.range = {}; // the band stays the validation band (evaluate() caught the same)
        }
        promise.addResult(std::move(out));
    };
    m_range = QtConcurrent::run(price);
    m_rangePending = true;
    m_rangeWatcher->setFuture(m_range);
}

void Document::landStackRange()
{
    if (!m_rangePending || !m_range.isFinished())
        return;
    m_rangePending = false;
    const QFuture<PricedRange> done = std::exchange(m_range, {});
    if (!done.isCanceled() && done.resultCount() > 0) {
        const PricedRange priced = done.result();
        if (priced.generation != m_generation)
            return; // for an evaluation that is gone (cannot happen: evaluate() cancels it)
        engine::mergeStackRange(m_evaluation, priced.range);
    }
    Q_EMIT stackRangeChanged();
}

void Document::ensureStackRange()
{
    if (!m_rangePending)
        return;
    m_range.waitForFinished(); // runs it here if the pool has not started it yet
    landStackRange();
}

std::shared_ptr<const engine::LinkLoads> Document::linkLoads() const
{
    if (!m_serving)
        return m_evaluation.links;
    if (!m_serving->ok || !m_serving->links)
        return nullptr;
    // The decode step's loads live inside the serving links: share their owner.
    return {m_serving->links, &m_serving->links->decodeStep};
}

const engine::StepTimeline &Document::timeline() const
{
    return m_serving ? m_serving->decodeTimeline : m_evaluation.timeline;
}

engine::Evaluation Document::evaluateVariant(const engine::Layout &variant,
                                             const engine::EvaluateOptions &options) const
{
    if (!(variant.cluster == m_layout.cluster)) {
        engine::Evaluation e;
        e.error = "the variant's cluster differs from the document's";
        return e;
    }
    return engine::evaluate(variant, *m_topology, m_workspace, options);
}

void Document::setView(const engine::Json &view)
{
    m_layout.view = view;
}

void Document::pin()
{
    // A holds its whole band.
    ensureStackRange();
    // A shipped example has no file of its own, but a name.
    const QString path = m_filePath.isEmpty() ? m_origin : m_filePath;
    m_pinned = Snapshot{m_layout,
                        m_evaluation,
                        m_serving ? std::make_shared<const engine::ServingEvaluation>(*m_serving)
                                  : nullptr,
                        path.isEmpty() ? displayName() : QFileInfo(path).fileName(),
                        path};
    Q_EMIT pinnedChanged();
}

void Document::setPinned(const Snapshot &snapshot)
{
    m_pinned = snapshot;
    Q_EMIT pinnedChanged();
}

void Document::unpin()
{
    if (!m_pinned)
        return;
    m_pinned.reset();
    Q_EMIT pinnedChanged();
}

void Document::setFilePath(const QString &path)
{
    if (path == m_filePath)
        return;
    m_filePath = path;
    Q_EMIT filePathChanged();
}

QString Document::displayName() const
{
    if (!m_filePath.isEmpty())
        return QFileInfo(m_filePath).fileName();
    if (!m_layout.title.empty())
        return QString::fromStdString(m_layout.title);
    return tr("Untitled");
}

bool Document::isModified() const
{
    return !m_undoStack->isClean();
}

void Document::markModified()
{
    m_undoStack->resetClean(); // emits cleanChanged, and so modifiedChanged
}

QByteArray Document::toText() const
{
    return QByteArray::fromStdString(engine::layoutToText(m_layout));
}

bool Document::save(const QString &path, QString *error)
{
    const QByteArray text = toText();
    QString reason;
    if (!writeFileAtomically(path, text, &reason)) {
        if (error) {
            *error = path + tr(": cannot write: ") + reason;
            if (QFileInfo::exists(path))
                *error += tr("; the file on disk is unchanged");
        }
        return false;
    }
    setFilePath(QFileInfo(path).absoluteFilePath());
    setDiskState(text);
    m_undoStack->setClean();
    return true;
}

void Document::setDiskState(const QByteArray &contents)
{
    m_disk.known = true;
    m_disk.size = contents.size();
    m_disk.hash = hashOf(contents);
}

QString Document::diskFingerprint() const
{
    if (!m_disk.known)
        return {};
    return QStringLiteral("%1:%2").arg(m_disk.size).arg(QString::fromLatin1(m_disk.hash.toHex()));
}

void Document::setDiskFingerprint(const QString &fingerprint)
{
    const qsizetype colon = fingerprint.indexOf(QLatin1Char(':'));
    bool ok = false;
    const qint64 size = fingerprint.left(colon).toLongLong(&ok);
    const QByteArray hash = QByteArray::fromHex(fingerprint.mid(colon + 1).toLatin1());
    if (colon <= 0 || !ok || size < 0 || hash.size() != 32) {
        m_disk = {}; // unknown (a hostile or old recovery note)
        return;
    }
    m_disk.known = true;
    m_disk.size = size;
    m_disk.hash = hash;
}

bool Document::changedOnDisk() const
{
    if (!m_disk.known || m_filePath.isEmpty())
        return false;
    const QFileInfo info(m_filePath);
    if (!info.exists())
        return false;
    if (!info.isFile() || info.size() != m_disk.size || info.size() > kMaxCompared)
        return true;
    QFile file(m_filePath);
    if (!file.open(QIODevice::ReadOnly))
        return true; // cannot tell: ask rather than overwrite
    return hashOf(file.readAll()) != m_disk.hash;
}

} // namespace railyard
