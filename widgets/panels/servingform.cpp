#include "servingform.h"

#include "commands/changeserving.h"
#include "document/document.h"
#include "layout/servingstack.h"

#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>

namespace railyard {

namespace {

constexpr int kMaxTokens = 1 << 24; // the layout's limit per request
constexpr int kMaxSize = 1 << 20;

QSpinBox *spin(QWidget *parent, int lo, int hi)
{
    auto *s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setKeyboardTracking(false); // one value when typing is done, not one per key
    s->setGroupSeparatorShown(true);
    s->setAccelerated(true);
    return s;
}

// Short, so five columns fit a narrow dock; the tips say them in full.
const char *const kColumnNames[] = {"TP", "EP", "PP", "\u00d7", "ADP"};
const char *const kColumnWords[] = {"TP", "EP", "PP", "replicas", "attention DP"};
const char *const kColumnTips[]
        = {"Tensor parallel: every layer's matrices split over the GPUs of an instance; two "
           "all-reduces per layer on every token's critical path (keep it inside NVLink)",
           "Expert parallel: the MoE experts spread over the instance's GPUs; a dispatch and a "
           "combine per MoE layer",
           "Pipeline parallel: the layers split into stages; a send between stages",
           "Replicas: instances of the model, each serving its own requests",
           "Attention data parallel (ADP): attention runs at TP / this many ranks, each on its own "
           "requests (SGLang's --enable-dp-attention, TensorRT-LLM's enable_attention_dp)"};

engine::Precision precisionAt(int index)
{
    return index == 2   ? engine::Precision::Fp4
           : index == 1 ? engine::Precision::Fp8
                        : engine::Precision::Bf16;
}

int precisionIndex(engine::Precision p)
{
    return p == engine::Precision::Fp4 ? 2 : p == engine::Precision::Fp8 ? 1 : 0;
}

} // namespace

ServingForm::ServingForm(QWidget *parent)
    : QGroupBox(tr("Serving"), parent)
    , m_stack(new QComboBox(this))
    , m_precision(new QComboBox(this))
    , m_fp8Scaling(new QComboBox(this))
    , m_kvPrecision(new QComboBox(this))
    , m_input(spin(this, 1, kMaxTokens))
    , m_output(spin(this, 1, kMaxTokens))
    , m_load(new QComboBox(this))
    , m_concurrency(spin(this, 1, 1 << 24))
    , m_rate(new QDoubleSpinBox(this))
    , m_maxPrefill(spin(this, 1, kMaxTokens))
    , m_disaggregated(new QCheckBox(tr("Separate prefill and decode"), this))
    , m_pools(new QGridLayout)
    , m_summary(new QLabel(this))
    , m_error(new QLabel(this))
{
    setObjectName(QStringLiteral("servingForm"));
    m_stack->addItem(tr("Generic"), QString());
    m_stack->setItemData(0, tr("The engine's generic defaults"), Qt::ToolTipRole);
    for (const engine::ServingStackProfile &p : engine::servingStackProfiles()) {
        m_stack->addItem(QString::fromStdString(p.id), QString::fromStdString(p.id));
        m_stack->setItemData(m_stack->count() - 1,
                             QString::fromStdString(p.description),
                             Qt::ToolTipRole);
    }
    m_stack->setToolTip(tr("The serving stack: its kernels, CUDA graphs, scheduler and memory "
                           "manager"));
    for (QComboBox *box : {m_precision, m_kvPrecision}) {
        box->addItem(tr("BF16"));
        box->addItem(tr("FP8"));
        box->addItem(tr("FP4"));
    }
    m_precision->setToolTip(tr("Number format of the weights and GEMMs"));
    m_fp8Scaling->addItem(tr("Per tensor"));
    m_fp8Scaling->setItemData(0,
                              tr("One scale per weight tensor and per activation tensor (NVIDIA "
                                 "ModelOpt's FP8 checkpoints)"),
                              Qt::ToolTipRole);
    m_fp8Scaling->addItem(tr("Per 128-block"));
    m_fp8Scaling->setItemData(1,
                              tr("One scale per 128 \u00d7 128 weight block and per 1 \u00d7 128 "
                                 "group of activations, DeepSeek-style (DeepSeek's and Qwen's own "
                                 "FP8 releases): "
                                 "a kernel of its own quantizes the activations before each GEMM "
                                 "outside the experts, and on Hopper TensorRT-LLM's MoE adds its "
                                 "accumulators after the MMA"),
                              Qt::ToolTipRole);
    m_kvPrecision->insertItem(0, tr("As the weights"));
    m_kvPrecision->setToolTip(tr("Number format of the KV cache (as the weights: FP8 when the "
                                 "weights are FP8 or FP4, else BF16)"));
    m_input->setToolTip(tr("Input (prompt) tokens per request"));
    m_output->setToolTip(tr("Output tokens per request"));
    m_load->addItem(tr("In flight"));
    m_load->addItem(tr("Rate"));
    m_load->setToolTip(tr("Closed loop (a fixed number of requests in flight per replica, as "
                          "benchmarks sweep) or open loop (requests/s offered to the cluster)"));
    m_concurrency->setToolTip(tr("Requests in flight per (decode) replica: the decode batch"));
    m_rate->setRange(0.001, 1e9);
    m_rate->setDecimals(3);
    m_rate->setKeyboardTracking(false);
    m_rate->setSuffix(tr(" /s"));
    m_rate->setToolTip(tr("Requests per second offered to the whole cluster"));
    m_maxPrefill->setToolTip(tr("Chunked-prefill budget: prompt tokens per step"));
    m_disaggregated->setToolTip(tr("Prefill on some GPUs, decode on others; each request's KV "
                                   "cache goes from its prefill GPUs to its decode GPUs"));

    auto *form = new QFormLayout;
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->addRow(tr("Stack"), m_stack);
    form->addRow(tr("Precision"), m_precision);
    form->addRow(tr("FP8 scaling"), m_fp8Scaling);
    form->addRow(tr("KV cache"), m_kvPrecision);
    form->addRow(tr("Input tokens"), m_input);
    form->addRow(tr("Output tokens"), m_output);
    auto *loadRow = new QHBoxLayout;
    loadRow->addWidget(m_load);
    loadRow->addWidget(m_concurrency, 1);
    loadRow->addWidget(m_rate, 1);
    form->addRow(tr("Load"), loadRow);
    form->addRow(tr("Prefill chunk"), m_maxPrefill);
    form->addRow(m_disaggregated);

    for (int c = 0; c < PoolColumnCount; ++c) {
        auto *head = new QLabel(tr(kColumnNames[c]), this);
        head->setToolTip(tr(kColumnTips[c]));
        head->setAlignment(Qt::AlignCenter);
        m_pools->addWidget(head, 0, c + 1);
    }
    const char *const rowNames[] = {"Pool", "Prefill", "Decode"};
    for (int r = 0; r < PoolRowCount; ++r) {
        auto *name = new QLabel(tr(rowNames[r]), this);
        m_poolName[static_cast<std::size_t>(r)] = name;
        m_pools->addWidget(name, r + 1, 0);
        for (int c = 0; c < PoolColumnCount; ++c) {
            QSpinBox *s = spin(this, 1, kMaxSize);
            s->setToolTip(tr(kColumnTips[c]));
            // Five to a row in a narrow dock: the width it is given, not its largest value's.
            s->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
            s->setMinimumWidth(32);
            m_pool[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = s;
            m_pools->addWidget(s, r + 1, c + 1);
            const QString key = QStringLiteral("pool-%1-%2").arg(r).arg(c);
            const QString what = QStringLiteral("%1 %2").arg(tr(rowNames[r]).toLower(),
                                                             tr(kColumnWords[c]));
            connect(s, &QSpinBox::valueChanged, this, [this, key, what] {
                if (!m_syncing)
                    edited(what, key);
            });
        }
    }
    m_pools->setHorizontalSpacing(3);

    const auto field = [this](const QString &what, const QString &key) {
        return [this, what, key] {
            if (!m_syncing)
                edited(what, key);
        };
    };
    connect(m_stack, &QComboBox::activated, this, field(tr("stack"), {}));
    connect(m_precision, &QComboBox::activated, this, field(tr("precision"), {}));
    connect(m_fp8Scaling, &QComboBox::activated, this, field(tr("FP8 scaling"), {}));
    connect(m_kvPrecision, &QComboBox::activated, this, field(tr("KV-cache precision"), {}));
    connect(m_input, &QSpinBox::valueChanged, this, field(tr("input tokens"), "input"));
    connect(m_output, &QSpinBox::valueChanged, this, field(tr("output tokens"), "output"));
    connect(m_load, &QComboBox::activated, this, field(tr("load"), {}));
    connect(m_concurrency, &QSpinBox::valueChanged, this, field(tr("concurrency"), "concurrency"));
    connect(m_rate, &QDoubleSpinBox::valueChanged, this, field(tr("request rate"), "rate"));
    connect(m_maxPrefill, &QSpinBox::valueChanged, this, field(tr("prefill chunk"), "chunk"));
    connect(m_disaggregated, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_syncing)
            disaggregationToggled(on);
    });

    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b91c1c;"));
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->hide();

    for (QComboBox *box : {m_stack, m_precision, m_fp8Scaling, m_kvPrecision, m_load}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(5);
        box->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        box->view()->setMinimumWidth(box->view()->sizeHintForColumn(0) + 24);
    }

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(m_pools);
    layout->addWidget(m_summary);
    layout->addWidget(m_error);
}

void ServingForm::setDocument(Document *document)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    m_document = document;
    setEnabled(document != nullptr);
    if (!document)
        return;
    // The summary says what the engine made of the pools: it follows every evaluation.
    connect(document, &Document::evaluationChanged, this, &ServingForm::sync);
    m_error->hide();
    sync();
}

QString ServingForm::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

QString ServingForm::summaryText() const
{
    return m_summary->text();
}

void ServingForm::showPool(PoolRow row, const engine::ServingPool &pool)
{
    const auto &boxes = m_pool[static_cast<std::size_t>(row)];
    boxes[Tp]->setValue(pool.tp);
    boxes[Ep]->setValue(pool.ep);
    boxes[Pp]->setValue(pool.pp);
    boxes[Replicas]->setValue(pool.replicas);
    // Attention DP over the whole TP group is written 0 ("true"): show it as the TP size.
    const int adp = pool.attentionDp.value_or(1);
    boxes[AttentionDp]->setValue(adp == 0 ? pool.tp : adp);
}

void ServingForm::readPool(PoolRow row, engine::ServingPool &pool) const
{
    const auto &boxes = m_pool[static_cast<std::size_t>(row)];
    pool.tp = boxes[Tp]->value();
    pool.ep = boxes[Ep]->value();
    pool.pp = boxes[Pp]->value();
    pool.replicas = boxes[Replicas]->value();
    const int adp = boxes[AttentionDp]->value();
    // Unchanged stays as the file said it (0 for "true"); 1 is the default, left out.
    const int was = pool.attentionDp.value_or(1);
    if (!(was == 0 && adp == pool.tp))
        pool.attentionDp = adp > 1 ? std::optional<int>(adp) : std::nullopt;
}

void ServingForm::sync()
{
    if (!m_document || !m_document->layout().serving)
        return;
    m_syncing = true;
    const engine::Layout &l = m_document->layout();
    const engine::ServingConfig &s = *l.serving;
    m_stack->setCurrentIndex(std::max(0, m_stack->findData(QString::fromStdString(s.stack))));
    m_precision->setCurrentIndex(precisionIndex(s.precision));
    // Scaling is the FP8 checkpoint's: with other weights there is none to choose.
    const bool fp8 = s.precision == engine::Precision::Fp8;
    m_fp8Scaling->setCurrentIndex(s.fp8BlockScaled ? 1 : 0);
    m_fp8Scaling->setEnabled(fp8);
    m_fp8Scaling->setToolTip(
            fp8 ? tr("How the FP8 checkpoint is scaled: per tensor, or per 128-block as DeepSeek "
                     "released its weights")
                : tr("Only FP8 weights carry a scaling choice: the weights are %1 (choose FP8 "
                     "under Precision)")
                            .arg(m_precision->currentText()));
    m_kvPrecision->setCurrentIndex(s.kvPrecision ? 1 + precisionIndex(*s.kvPrecision) : 0);
    m_input->setValue(s.inputTokens);
    m_output->setValue(s.outputTokens);
    const bool open = s.requestRate.has_value();
    m_load->setCurrentIndex(open ? 1 : 0);
    m_concurrency->setVisible(!open);
    m_rate->setVisible(open);
    m_concurrency->setValue(s.concurrency.value_or(1));
    m_rate->setValue(s.requestRate.value_or(1));
    m_maxPrefill->setValue(s.maxPrefillTokens);
    const bool split = s.disaggregated.has_value();
    m_disaggregated->setChecked(split);
    engine::ServingPool aggregated;
    aggregated.tp = l.parallel.tp;
    aggregated.ep = l.parallel.ep;
    aggregated.pp = l.parallel.pp;
    aggregated.replicas = l.dataParallel();
    aggregated.attentionDp = l.parallel.attentionDp;
    showPool(Aggregated, aggregated);
    if (split) {
        showPool(Prefill, s.disaggregated->prefill);
        showPool(Decode, s.disaggregated->decode);
    }
    for (int r = 0; r < PoolRowCount; ++r) {
        const bool shown = (r == Aggregated) != split;
        m_poolName[static_cast<std::size_t>(r)]->setVisible(shown);
        for (QSpinBox *b : m_pool[static_cast<std::size_t>(r)])
            b->setVisible(shown);
    }

    const engine::ServingEvaluation *e = m_document->servingEvaluation();
    const int clusterGpus = static_cast<int>(l.cluster.gpuCount());
    QString summary;
    if (e && e->ok) {
        summary = tr("%1 of %2 GPUs serve").arg(e->gpus).arg(clusterGpus);
        if (e->maxConcurrency > 0)
            summary += (split ? tr("; the KV cache holds %1 requests per decode replica")
                              : tr("; the KV cache holds %1 requests per replica"))
                               .arg(QLocale().toString(e->maxConcurrency));
        summary += QLatin1Char('.');
    } else if (e) {
        summary = QStringLiteral("<span style='color:#b91c1c'>%1</span>")
                          .arg(tr("Cannot be priced: %1")
                                       .arg(QString::fromStdString(e->error))
                                       .toHtmlEscaped());
    }
    m_summary->setText(summary);
    m_syncing = false;
}

void ServingForm::edited(const QString &what, const QString &mergeKey)
{
    if (!m_document || !m_document->layout().serving)
        return;
    const engine::Layout &l = m_document->layout();
    engine::ServingConfig s = *l.serving;
    engine::ParallelConfig p = l.parallel;
    const QVariant stack = m_stack->currentData();
    s.stack = stack.toString().toStdString();
    s.precision = precisionAt(m_precision->currentIndex());
    // Block scaling belongs to an FP8 checkpoint (the layout refuses it with other weights):
    // leaving FP8 takes the scaling back to per tensor in the same undo step.
    const bool wasBlock = s.fp8BlockScaled;
    s.fp8BlockScaled = s.precision == engine::Precision::Fp8 && m_fp8Scaling->currentIndex() == 1;
    s.kvPrecision = m_kvPrecision->currentIndex() == 0
                            ? std::nullopt
                            : std::optional(precisionAt(m_kvPrecision->currentIndex() - 1));
    s.inputTokens = m_input->value();
    s.outputTokens = m_output->value();
    if (m_load->currentIndex() == 1) {
        s.concurrency.reset();
        s.requestRate = m_rate->value();
    } else {
        s.requestRate.reset();
        s.concurrency = m_concurrency->value();
    }
    s.maxPrefillTokens = m_maxPrefill->value();
    if (s.disaggregated) {
        readPool(Prefill, s.disaggregated->prefill);
        readPool(Decode, s.disaggregated->decode);
    } else {
        engine::ServingPool pool;
        pool.attentionDp = p.attentionDp;
        readPool(Aggregated, pool);
        p.tp = pool.tp;
        p.ep = pool.ep;
        p.pp = pool.pp;
        p.attentionDp = pool.attentionDp;
        // DP stays derived from the GPU count until the user sets another number of replicas.
        if (pool.replicas != l.dataParallel())
            p.dp = pool.replicas;
    }
    const bool scalingReset = wasBlock && s.precision != engine::Precision::Fp8;
    push(s,
         p,
         scalingReset ? tr("Change %1 (FP8 scaling back to per tensor)").arg(what)
                      : tr("Change %1").arg(what),
         mergeKey);
}

void ServingForm::disaggregationToggled(bool on)
{
    if (!m_document || !m_document->layout().serving)
        return;
    const engine::Layout &l = m_document->layout();
    engine::ServingConfig s = *l.serving;
    engine::ParallelConfig p = l.parallel;
    if (on) {
        // The pool's instances split in two: half prefill, half decode (at least one each).
        engine::ServingPool pool;
        pool.tp = p.tp;
        pool.ep = p.ep;
        pool.pp = p.pp;
        pool.attentionDp = p.attentionDp;
        const int replicas = l.dataParallel();
        engine::DisaggregationConfig d;
        d.prefill = pool;
        d.decode = pool;
        d.prefill.replicas = std::max(1, replicas / 2);
        d.decode.replicas = std::max(1, replicas - d.prefill.replicas);
        s.disaggregated = d;
        // The top-level sizes are the aggregated pool's; they fall back to the defaults.
        p = engine::ParallelConfig{};
        p.order = l.parallel.order;
    } else if (s.disaggregated) {
        // One pool of the decode instances' shape over the cluster.
        const engine::ServingPool &d = s.disaggregated->decode;
        p.tp = d.tp;
        p.ep = d.ep;
        p.pp = d.pp;
        p.attentionDp = d.attentionDp;
        p.dp.reset();
        s.disaggregated.reset();
    }
    push(s,
         p,
         on ? tr("Separate prefill and decode pools") : tr("Serve prefill and decode together"),
         {});
}

void ServingForm::push(const engine::ServingConfig &serving,
                       const engine::ParallelConfig &parallel,
                       const QString &text,
                       const QString &mergeKey)
{
    const engine::Layout after = ChangeServing::apply(m_document->layout(), serving, parallel);
    if (after.sameContent(m_document->layout())) {
        sync();
        return;
    }
    // A value the layout refuses never lands: say why and show what the document holds.
    const QString problem = Document::checkLayout(after);
    m_error->setText(problem);
    m_error->setVisible(!problem.isEmpty());
    if (!problem.isEmpty()) {
        sync();
        return;
    }
    m_document->undoStack()->push(new ChangeServing(m_document, serving, parallel, text, mergeKey));
}

} // namespace railyard
