#include "lessonpanel.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "document/document.h"
#include "document/lessonframe.h"
#include "document/viewstate.h"

#include <QAction>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScopedValueRollback>
#include <QSlider>
#include <QVBoxLayout>

namespace railyard {

using engine::Algorithm;
using engine::CollectiveOp;

namespace {

QLabel *wrapped(QWidget *parent)
{
    auto *l = new QLabel(parent);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

QAction *stepAction(QWidget *parent, const QString &text, const QKeySequence &key, const char *name)
{
    auto *a = new QAction(text, parent);
    a->setShortcut(key);
    a->setObjectName(QString::fromLatin1(name));
    a->setEnabled(false);
    return a;
}

} // namespace

LessonPanel::LessonPanel(QWidget *parent)
    : QWidget(parent)
{
    m_op = new QComboBox(this);
    m_op->addItem(tr("All-reduce"), int(CollectiveOp::AllReduce));
    m_op->addItem(tr("All-gather"), int(CollectiveOp::AllGather));
    m_op->addItem(tr("Reduce-scatter"), int(CollectiveOp::ReduceScatter));
    m_op->addItem(tr("Broadcast"), int(CollectiveOp::Broadcast));
    m_size = new QLineEdit(QStringLiteral("1 GiB"), this);
    m_size->setToolTip(tr("The message size: B, KB, MB, GB (powers of 1000, as nccl-tests prints) "
                          "or KiB, MiB, GiB"));
    m_group = new QComboBox(this);
    m_group->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_group->setMinimumContentsLength(12);
    m_algorithm = new QComboBox(this);
    m_algorithm->addItem(tr("Auto"), int(Algorithm::Auto));
    m_algorithm->addItem(tr("Ring"), int(Algorithm::Ring));
    m_algorithm->addItem(tr("Tree"), int(Algorithm::Tree));
    m_algorithm->addItem(tr("NVLS"), int(Algorithm::Nvls));
    m_algorithm->addItem(tr("SHARP"), int(Algorithm::Sharp));
    m_algorithm->addItem(tr("Hierarchical"), int(Algorithm::Hierarchical));
    m_algorithm->setCurrentIndex(1); // the ring first: the picture every course starts from

    auto *form = new QFormLayout;
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    form->addRow(tr("Collective"), m_op);
    form->addRow(tr("Size"), m_size);
    form->addRow(tr("Group"), m_group);
    form->addRow(tr("Algorithm"), m_algorithm);

    m_backAction = stepAction(this,
                              tr("Lesson: Step &Back"),
                              QKeySequence(Qt::CTRL | Qt::Key_BracketLeft),
                              "actionLessonBack");
    m_forwardAction = stepAction(this,
                                 tr("Lesson: Step &Forward"),
                                 QKeySequence(Qt::CTRL | Qt::Key_BracketRight),
                                 "actionLessonForward");
    m_playAction = stepAction(this,
                              tr("Lesson: &Play / Pause"),
                              QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_Space),
                              "actionLessonPlay");
    m_restartAction = stepAction(this,
                                 tr("Lesson: &Restart"),
                                 QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_Home),
                                 "actionLessonRestart");
    m_restartAction->setEnabled(true);
    connect(m_backAction, &QAction::triggered, this, &LessonPanel::back);
    connect(m_forwardAction, &QAction::triggered, this, &LessonPanel::forward);
    connect(m_playAction, &QAction::triggered, this, &LessonPanel::togglePlay);
    connect(m_restartAction, &QAction::triggered, this, [this] { restart(); });

    const auto button = [this](QAction *a, const QString &text) {
        auto *b = new QPushButton(text, this);
        b->setToolTip(a->text().remove(QLatin1Char('&')) + QStringLiteral(" (")
                      + a->shortcut().toString(QKeySequence::NativeText) + QLatin1Char(')'));
        connect(b, &QPushButton::clicked, a, &QAction::trigger);
        return b;
    };
    m_backButton = button(m_backAction, tr("\u25C0 Back"));
    m_playButton = button(m_playAction, tr("Play"));
    m_forwardButton = button(m_forwardAction, tr("Next \u25B6"));
    m_restartButton = button(m_restartAction, tr("Restart"));
    auto *buttons = new QHBoxLayout;
    for (QPushButton *b : {m_backButton, m_playButton, m_forwardButton, m_restartButton}) {
        // Narrow docks: the buttons share the row rather than push it wider.
        b->setMinimumWidth(0);
        b->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
        buttons->addWidget(b);
    }

    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setRange(0, 0);
    m_slider->setPageStep(1);
    connect(m_slider, &QSlider::valueChanged, this, [this](int v) {
        if (!m_syncing)
            setStep(v);
    });

    m_title = wrapped(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_stepText = wrapped(this);
    m_stepText->setObjectName(QStringLiteral("lessonStepText"));
    QFont big = m_stepText->font();
    big.setPointSizeF(big.pointSizeF() * 1.08);
    m_stepText->setFont(big);
    m_stepInfo = wrapped(this);
    m_key = wrapped(this);
    m_key->setText(
            tr("On the canvas: <span style='color:#ea580c'>orange ring and arrow</span>: "
               "sends (badge: the chunk) &middot; <span style='color:#db2777'>dashed pink "
               "ring</span>: receives &middot; <span style='color:#059669'>green bar</span>: "
               "share of its result held after the step &middot; links: how busy each is "
               "in the step (its bottleneck = 100%)."));
    m_key->setStyleSheet(QStringLiteral("color:#5b6675"));
    m_transfers = new QListWidget(this);
    m_transfers->setMaximumHeight(130);
    m_transfers->setToolTip(tr("Every transfer of this step: sender, receiver, chunk and bytes"));
    m_formula = wrapped(this);
    m_formula->setObjectName(QStringLiteral("lessonFormula"));
    m_formula->setTextFormat(Qt::RichText);
    m_total = wrapped(this);
    m_total->setObjectName(QStringLiteral("lessonTotal"));
    m_textbook = wrapped(this);
    m_textbook->setObjectName(QStringLiteral("lessonTextbook"));
    m_textbook->setStyleSheet(QStringLiteral("color:#5b6675"));
    m_status = wrapped(this);
    m_status->setObjectName(QStringLiteral("lessonStatus"));

    auto *col = new QVBoxLayout(this);
    col->addLayout(form);
    col->addWidget(m_title);
    col->addLayout(buttons);
    col->addWidget(m_slider);
    col->addWidget(m_stepText);
    col->addWidget(m_stepInfo);
    col->addWidget(m_status);
    auto *formulaHead = new QLabel(tr("Formula"), this);
    formulaHead->setFont(bold);
    col->addWidget(formulaHead);
    col->addWidget(m_formula);
    col->addWidget(m_total);
    col->addWidget(m_textbook);
    auto *transfersHead = new QLabel(tr("Transfers in this step"), this);
    transfersHead->setFont(bold);
    col->addWidget(transfersHead);
    col->addWidget(m_transfers);
    col->addWidget(m_key);
    col->addStretch(1);

    for (QComboBox *box : {m_op, m_group, m_algorithm})
        connect(box, &QComboBox::activated, this, &LessonPanel::controlsChanged);
    connect(m_size, &QLineEdit::editingFinished, this, [this] {
        if (m_size->isModified()) {
            m_size->setModified(false);
            controlsChanged();
        }
    });
    syncButtons();
}

LessonPanel::~LessonPanel()
{
    if (m_view) {
        m_view->stopLesson();
        m_view->setLesson(nullptr);
    }
}

void LessonPanel::setDocument(Document *document, ViewState *view)
{
    if (m_document)
        disconnect(m_document, nullptr, this, nullptr);
    if (m_view) {
        disconnect(m_view, nullptr, this, nullptr);
        m_view->stopLesson();
        m_view->setLesson(nullptr);
    }
    // Another layout: the lesson's GPUs and links were the old cluster's. It ends, and waits
    // for Restart rather than stepping through something the student did not choose.
    const bool ended = m_lesson != nullptr && document != m_document;
    m_document = document;
    m_view = view;
    m_lesson.reset();
    m_step = 0;
    if (m_document) {
        const auto changed = [this](const QString &what) {
            rebuildGroups();
            if (m_lesson)
                end(what);
        };
        connect(m_document, &Document::clusterChanged, this, [changed, this] {
            changed(tr("The cluster changed, so the lesson ended. Restart (%1) steps through it "
                       "on the new cluster.")
                            .arg(m_restartAction->shortcut().toString(QKeySequence::NativeText)));
        });
        connect(m_document, &Document::workloadChanged, this, [changed, this] {
            changed(tr("The job changed, so the lesson ended: choose a group and Restart."));
        });
        connect(m_document, &Document::mappingChanged, this, [changed, this] {
            changed(tr("The placement changed, so the lesson ended: choose a group and Restart."));
        });
    }
    if (m_view)
        connect(m_view, &ViewState::changed, this, [this](ViewState::Changes what) {
            if (what & ViewState::SelectedGpus)
                rebuildGroups();
            // Playing: the one animation driver moves the lesson on, a step at a time.
            if (what & ViewState::LessonPlay) {
                if (m_view->isLessonPlaying()) {
                    const QScopedValueRollback driven(m_driven, true);
                    setStep(m_view->lessonPlayStep());
                }
                syncButtons();
            }
        });
    rebuildGroups();
    if (ended) {
        m_status->setStyleSheet(QString());
        m_status->setText(
                tr("Another layout opened, so the lesson ended. Restart (%1) steps "
                   "through it here.")
                        .arg(m_restartAction->shortcut().toString(QKeySequence::NativeText)));
    }
    showStep();
    Q_EMIT lessonChanged();
}

void LessonPanel::setActive(bool active)
{
    if (active == m_active)
        return;
    m_active = active;
    if (!active)
        stopPlaying();
    if (active && !m_lesson)
        restart();
    else
        publishFrame();
    syncButtons();
}

int LessonPanel::stepCount() const
{
    return m_lesson ? static_cast<int>(m_lesson->steps.size()) : 0;
}

bool LessonPanel::restart()
{
    stopPlaying();
    m_lesson.reset();
    m_step = 0;
    m_status->clear();
    m_status->setStyleSheet(QString());
    if (!m_document) {
        showStep();
        return false;
    }
    const engine::Topology &t = m_document->topology();
    const std::vector<int> gpus = groupChoice(m_group->currentIndex());
    engine::CollectiveRequest req;
    req.op = CollectiveOp(m_op->currentData().toInt());
    req.algorithm = Algorithm(m_algorithm->currentData().toInt());
    req.gpus = gpus;
    // The textbook flat ring at the layout's achieved fraction when it gives one (else the
    // seed article's 80%).
    req.efficiency = m_document->layout().cluster.tuning.efficiency;
    // Auto names what NCCL would pick for this group and size, whatever is chosen.
    QString autoText = tr("Auto");
    try {
        req.bytes = static_cast<double>(engine::parseSize(m_size->text().toStdString()));
        engine::CollectiveRequest a = req;
        a.algorithm = Algorithm::Auto;
        if (gpus.size() >= 2 && req.op != CollectiveOp::Broadcast)
            autoText = tr("Auto (NCCL picks %1)")
                               .arg(QString::fromLatin1(engine::toString(
                                       engine::estimateCollective(t, a).algorithm)));
        m_lesson = std::make_unique<engine::CollectiveLesson>(engine::buildCollectiveLesson(t, req));
        m_topology = t.buildId();
    } catch (const engine::InputError &e) {
        m_lesson.reset();
        m_status->setStyleSheet(QStringLiteral("color:#dc2626"));
        m_status->setText(tr("Cannot step through this: %1").arg(QString::fromStdString(e.what())));
    }
    m_algorithm->setItemText(0, autoText);
    showStep();
    Q_EMIT lessonChanged();
    return m_lesson != nullptr;
}

void LessonPanel::end(const QString &why)
{
    stopPlaying();
    m_lesson.reset();
    m_step = 0;
    if (!why.isEmpty()) {
        m_status->setStyleSheet(QString());
        m_status->setText(why);
    }
    showStep();
    Q_EMIT lessonChanged();
}

void LessonPanel::setStep(int step)
{
    if (!m_lesson)
        return;
    step = std::clamp(step, 0, stepCount() - 1);
    if (step == m_step && m_slider->value() == step)
        return;
    m_step = step;
    // A step chosen by hand while playing: play on from there.
    if (!m_driven && isPlaying())
        m_view->playLesson(step, stepCount() - 1);
    showStep();
    Q_EMIT stepChanged(step);
}

void LessonPanel::forward()
{
    setStep(m_step + 1);
}

void LessonPanel::back()
{
    setStep(m_step - 1);
}

bool LessonPanel::isPlaying() const
{
    return m_view && m_view->isLessonPlaying();
}

void LessonPanel::stopPlaying()
{
    if (m_view)
        m_view->stopLesson();
}

void LessonPanel::togglePlay()
{
    if (!m_lesson || !m_view)
        return;
    if (isPlaying()) {
        m_view->stopLesson();
    } else {
        if (m_step + 1 >= stepCount())
            setStep(0);
        m_view->playLesson(m_step, stepCount() - 1);
    }
    syncButtons();
}

void LessonPanel::controlsChanged()
{
    if (m_active)
        restart();
}

void LessonPanel::syncButtons()
{
    const bool on = m_lesson != nullptr;
    m_backAction->setEnabled(on && m_active && m_step > 0);
    m_forwardAction->setEnabled(on && m_active && m_step + 1 < stepCount());
    m_playAction->setEnabled(on && m_active);
    m_restartAction->setEnabled(m_active);
    m_backButton->setEnabled(m_backAction->isEnabled());
    m_forwardButton->setEnabled(m_forwardAction->isEnabled());
    m_playButton->setEnabled(m_playAction->isEnabled());
    m_restartButton->setEnabled(m_active && m_document);
    m_playButton->setText(isPlaying() ? tr("Pause") : tr("Play"));
}

QList<QAction *> LessonPanel::stepActions() const
{
    return {m_backAction, m_forwardAction, m_playAction, m_restartAction};
}

void LessonPanel::showStep()
{
    m_syncing = true;
    m_slider->setRange(0, std::max(0, stepCount() - 1));
    m_slider->setValue(m_step);
    m_slider->setEnabled(m_lesson != nullptr);
    m_syncing = false;
    m_transfers->clear();
    if (!m_lesson) {
        m_title->setText(m_document ? tr("No lesson running.") : QString());
        m_stepText->clear();
        m_stepInfo->clear();
        m_formula->clear();
        m_total->clear();
        m_textbook->clear();
    } else {
        const engine::CollectiveLesson &L = *m_lesson;
        const engine::LessonStep &s = L.steps[static_cast<std::size_t>(m_step)];
        m_title->setText(QString::fromStdString(L.title));
        m_stepText->setText(QString::fromStdString(s.text));
        m_stepInfo->setText(stepDetail());
        constexpr int kShown = 64;
        int shown = 0;
        for (const engine::LessonTransfer &t : s.transfers) {
            if (shown++ == kShown) {
                m_transfers->addItem(
                        tr("\u2026 and %1 more").arg(static_cast<int>(s.transfers.size()) - kShown));
                break;
            }
            m_transfers->addItem(transferText(t));
        }
        m_formula->setText(formulaHtml());
        m_total->setText(totalText());
        m_textbook->setText(textbookText());
    }
    publishFrame();
    syncButtons();
}

} // namespace railyard
