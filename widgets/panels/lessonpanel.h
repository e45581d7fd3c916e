#pragma once

#include "lesson/collectivelesson.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSlider;

namespace railyard {

class Document;
class ViewState;

// The Collective Lesson dock: pick a collective, a size, a group of the document's GPUs (a
// parallel group, the selection, one server, two servers) and an algorithm (Auto: what NCCL
// would pick), then step through the schedule the engine builds (engine/collectivelesson.h)
// chunk by chunk. Each step's description, transfers and duration show here; the canvas lights
// the step's links with their load and marks the GPUs that send and receive (the panel sets a
// LessonFrame into the view state). Beside it, the formula with its numbers and the total
// against the engine's estimate, and the seed article's textbook flat ring for the same GPUs.
// The lesson shows while the dock is visible, and ends when the cluster, the job or the mapping
// changes (its ids would describe another cluster) or another layout opens.
class LessonPanel : public QWidget
{
    Q_OBJECT

public:
    explicit LessonPanel(QWidget *parent = nullptr);
    ~LessonPanel() override;

    void setDocument(Document *document, ViewState *view);
    // The lesson is drawn on the canvas only while active (the dock is visible).
    void setActive(bool active);
    bool isActive() const { return m_active; }

    // (Re)builds the lesson from the controls and shows its first step; false (with the reason
    // in the status line) when it cannot run.
    bool restart();
    // Ends the lesson: the canvas back to the normal view.
    void end(const QString &why = QString());
    bool hasLesson() const { return m_lesson != nullptr; }
    const engine::CollectiveLesson *lesson() const { return m_lesson.get(); }

    int step() const { return m_step; }
    int stepCount() const;
    void setStep(int step);
    void forward();
    void back();
    void togglePlay();
    bool isPlaying() const;

    // The group choices: "One server", "Across two servers", the selection, the job's groups.
    int groupChoiceCount() const;
    std::vector<int> groupChoice(int index) const;
    void chooseGroup(int index);

    QComboBox *opBox() const { return m_op; }
    QLineEdit *sizeEdit() const { return m_size; }
    QComboBox *groupBox() const { return m_group; }
    QComboBox *algorithmBox() const { return m_algorithm; }
    QSlider *slider() const { return m_slider; }
    QLabel *stepLabel() const { return m_stepText; }
    QLabel *formulaLabel() const { return m_formula; }
    QLabel *totalLabel() const { return m_total; }
    // The seed article's textbook flat ring beside the estimate (the engine's flatRing()).
    QLabel *textbookLabel() const { return m_textbook; }
    QLabel *statusLabel() const { return m_status; }
    QListWidget *transfersList() const { return m_transfers; }
    // Back, forward, play / pause and restart, with their shortcuts (for the View menu).
    QList<QAction *> stepActions() const;

Q_SIGNALS:
    void lessonChanged();
    void stepChanged(int step);

private:
    void rebuildGroups();
    void controlsChanged();
    void showStep();
    void publishFrame();
    void syncButtons();
    void stopPlaying();
    QString stepDetail() const;
    QString transferText(const engine::LessonTransfer &t) const;
    QString formulaHtml() const;
    QString totalText() const;
    QString textbookText() const;
    QString deviceName(int device) const;

    QPointer<Document> m_document;
    QPointer<ViewState> m_view;
    std::unique_ptr<engine::CollectiveLesson> m_lesson;
    std::uint64_t m_topology = 0; // the topology the lesson was built on
    int m_step = 0;
    bool m_active = false;
    bool m_syncing = false;
    bool m_driven = false; // the step is being set by the view state's driver
    struct Choice
    {
        QString label;
        std::vector<int> gpus;
    };
    std::vector<Choice> m_choices;

    QComboBox *m_op;
    QLineEdit *m_size;
    QComboBox *m_group;
    QComboBox *m_algorithm;
    QPushButton *m_backButton;
    QPushButton *m_forwardButton;
    QPushButton *m_playButton;
    QPushButton *m_restartButton;
    QSlider *m_slider;
    QLabel *m_title;
    QLabel *m_stepText;
    QLabel *m_stepInfo;
    QListWidget *m_transfers;
    QLabel *m_formula;
    QLabel *m_total;
    QLabel *m_textbook;
    QLabel *m_status;
    QLabel *m_key;
    QAction *m_backAction;
    QAction *m_forwardAction;
    QAction *m_playAction;
    QAction *m_restartAction;
};

} // namespace railyard
