#pragma once

#include <QObject>

class QWidget;

namespace railyard {

// Keeps the mouse wheel for scrolling the panels. A spin box, combo box or slider in a scrolled
// panel changes on the wheel only once the user has clicked or tabbed into it; until then the
// wheel scrolls the panel it sits in, as it does over the panel's labels. (By default Qt hands
// such a field the focus on the first notch and steps its value on every notch, so rolling the
// wheel down a dock changed the workload without a word: Global batch 128 -> 32 in three notches.)
class WheelGuard : public QObject
{
    Q_OBJECT

public:
    // Guards every spin box, combo box and slider (scroll bars aside) under `root`.
    static void install(QWidget *root);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    explicit WheelGuard(QObject *parent);
};

} // namespace railyard
