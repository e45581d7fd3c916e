#include "faulttables.h"

#include "base/units.h"
#include "faults/faultreport.h"

#include <QHeaderView>
#include <QLocale>
#include <QObject>
#include <QTableWidget>

#include <algorithm>

namespace railyard::faulttables {

QString text(const std::string &s)
{
    return QString::fromStdString(s);
}

QString seconds(double s)
{
    return text(engine::formatSeconds(s));
}

QString pct(double fraction)
{
    return QStringLiteral("%1%").arg(QLocale().toString(100 * fraction, 'f', 1));
}

QString bytes(double b)
{
    return text(engine::formatBytes(b));
}

QString metricName(const std::string &key)
{
    if (key == "step_time_s")
        return QObject::tr("Step time");
    if (key == "tpot_s")
        return QObject::tr("TPOT");
    if (key == "ttft_s")
        return QObject::tr("TTFT");
    if (key == "slowest_tpot_s")
        return QObject::tr("Slowest replica's TPOT");
    if (key == "slowest_ttft_s")
        return QObject::tr("Slowest replica's TTFT");
    if (key == "output_tokens_per_s_per_gpu")
        return QObject::tr("Output tokens/s per GPU");
    if (key == "tokens_per_s_per_user")
        return QObject::tr("Tokens/s per user");
    if (key == "output_tokens_per_s")
        return QObject::tr("Output tokens/s");
    if (key == "requests_per_s")
        return QObject::tr("Requests/s");
    if (key == "cost_per_million_output_tokens")
        return QObject::tr("$ per million output tokens");
    if (key == "tokens_per_s")
        return QObject::tr("Tokens/s");
    if (key == "mfu")
        return QObject::tr("MFU");
    if (key == "cost_per_million_tokens")
        return QObject::tr("$ per million tokens");
    return text(key);
}

QString metricValue(const std::string &key, double v)
{
    if (engine::impactMetricInSeconds(key))
        return seconds(v);
    if (key == "mfu")
        return pct(v);
    if (key == "cost_per_million_tokens" || key == "cost_per_million_output_tokens")
        return QStringLiteral("$%1").arg(QLocale().toString(v, 'f', 2));
    if (key == "tokens_per_s_per_user" || key == "output_tokens_per_s_per_gpu"
        || key == "requests_per_s")
        return QLocale().toString(v, 'f', 1);
    return QLocale().toString(v, 'f', 0);
}

QTableWidget *makeTable(int columns, const QStringList &headers, QWidget *parent)
{
    auto *t = new QTableWidget(0, columns, parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setWordWrap(false);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QTableWidgetItem *cell(const QString &s, bool number)
{
    auto *item = new QTableWidgetItem(s);
    if (number)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

// A table as tall as its rows (up to `maxRows`), so the dock scrolls as one page.
void fitHeight(QTableWidget *t, int maxRows)
{
    const int rows = std::min(t->rowCount(), maxRows);
    int h = t->horizontalHeader()->height() + 2 * t->frameWidth();
    for (int r = 0; r < rows; ++r)
        h += t->rowHeight(r);
    t->setFixedHeight(std::max(h, t->horizontalHeader()->height() + 2 * t->frameWidth() + 4));
}

} // namespace railyard::faulttables
