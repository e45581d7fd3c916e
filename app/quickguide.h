#pragma once

#include <QDialog>

#include <functional>

class QTextBrowser;

namespace railyard {

// Help > Quick Guide (F1): what the window shows and the five things people do with it, in a
// page. The shortcuts it mentions come from the actions (`keyOf("actionPin")` -> "Ctrl+Shift+P").
class QuickGuide : public QDialog
{
    Q_OBJECT

public:
    explicit QuickGuide(const std::function<QString(const char *actionName)> &keyOf,
                        QWidget *parent = nullptr);

    QTextBrowser *browser() const { return m_browser; }

private:
    QTextBrowser *m_browser;
};

} // namespace railyard
