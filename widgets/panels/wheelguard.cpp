#include "wheelguard.h"

#include <QAbstractScrollArea>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QScrollBar>
#include <QWheelEvent>

namespace railyard {

WheelGuard::WheelGuard(QObject *parent)
    : QObject(parent)
{}

void WheelGuard::install(QWidget *root)
{
    if (!root)
        return;
    // One guard per root, owned by it; installing twice guards each field once.
    auto *guard = root->findChild<WheelGuard *>(QString(), Qt::FindDirectChildrenOnly);
    if (!guard)
        guard = new WheelGuard(root);
    for (QWidget *w : root->findChildren<QWidget *>()) {
        const bool field = qobject_cast<QAbstractSpinBox *>(w) || qobject_cast<QComboBox *>(w)
                           || (qobject_cast<QAbstractSlider *>(w) && !qobject_cast<QScrollBar *>(w));
        if (!field)
            continue;
        // Not WheelFocus: a notch must not hand the field the focus (and then its value).
        if (w->focusPolicy() == Qt::WheelFocus)
            w->setFocusPolicy(Qt::StrongFocus);
        w->removeEventFilter(guard);
        w->installEventFilter(guard);
    }
}

bool WheelGuard::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() != QEvent::Wheel)
        return false;
    auto *field = static_cast<QWidget *>(watched);
    if (field->hasFocus())
        return false; // the user is in the field: the wheel steps it
    // The scroll area the field sits in takes the wheel instead (its viewport passes it to the
    // scroll bars); a field in no scroll area ignores it.
    for (QWidget *p = field->parentWidget(); p; p = p->parentWidget())
        if (auto *area = qobject_cast<QAbstractScrollArea *>(p)) {
            QCoreApplication::sendEvent(area->viewport(), event);
            break;
        }
    event->accept();
    return true;
}

} // namespace railyard
