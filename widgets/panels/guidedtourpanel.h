#pragma once

#include "lesson/tour.h"

#include <QWidget>

#include <vector>

class QLabel;
class QListWidget;
class QPushButton;
class QTextBrowser;
class QVBoxLayout;

namespace railyard {

// The Guided Tour dock: the teaching scenarios (resources/tour/scenarios.json), each with a short
// text, a thing to try, what to look for and what the model assumes. Choosing a scenario asks
// for its first layout to be opened (the main window opens it as the document); a button per
// layout opens either side of a comparison. The panel only reads and forwards: the numbers come
// from the document's evaluation like any other layout's.
class GuidedTourPanel : public QWidget
{
    Q_OBJECT

public:
    explicit GuidedTourPanel(QWidget *parent = nullptr);

    // The tour the app ships, and the folder its layouts are in (Qt resources).
    static QString defaultTourFile();
    static QString defaultLayoutFolder();

    // Reads the scenarios from `tourFile`, whose layouts are in `layoutFolder`. On failure the
    // list is empty, the panel shows the message (naming the file and the place) and this
    // returns false.
    bool load(const QString &tourFile, const QString &layoutFolder);

    int scenarioCount() const { return static_cast<int>(m_scenarios.size()); }
    const engine::TourScenario &scenario(int index) const;
    // The path of layout `layout` of scenario `index` (in the layout folder).
    QString layoutPath(int index, int layout) const;
    // Selects scenario `index` (as a click on it does): shows its text and asks for its first
    // layout.
    void selectScenario(int index);
    int currentScenario() const;

    QListWidget *list() const { return m_list; }
    QTextBrowser *text() const { return m_text; }
    // The button that opens layout `layout` of the current scenario (null if none).
    QPushButton *openButton(int layout) const;
    QString errorText() const { return m_error; }

Q_SIGNALS:
    // Open this layout file as the document.
    void openLayoutRequested(const QString &path);

private:
    void showScenario(int index);

    std::vector<engine::TourScenario> m_scenarios;
    QString m_layoutFolder;
    QString m_error;
    QListWidget *m_list;
    QTextBrowser *m_text;
    QVBoxLayout *m_buttons;
    std::vector<QPushButton *> m_openButtons;
};

} // namespace railyard
