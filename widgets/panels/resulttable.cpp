#include "resulttable.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>

#include <algorithm>

namespace railyard {

void setUpResultTable(QTableWidget *table, int stretch)
{
    table->verticalHeader()->hide();
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setWordWrap(true);
    table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setSectionResizeMode(stretch, QHeaderView::Stretch);
    table->horizontalHeader()->setStretchLastSection(false);
    table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->setMinimumHeight(160);
}

QHBoxLayout *searchButtonRow(QPushButton *search,
                             QPushButton *cancel,
                             QPushButton *apply,
                             QProgressBar *progress)
{
    apply->setEnabled(false);
    cancel->hide();
    progress->hide();
    progress->setRange(0, 1000);
    auto *row = new QHBoxLayout;
    row->addWidget(search);
    row->addWidget(cancel);
    row->addStretch(1);
    row->addWidget(apply);
    return row;
}

void connectResultChoice(QTableWidget *table,
                         QPushButton *apply,
                         QObject *context,
                         std::function<void(int row)> applyRow,
                         std::function<void(int row)> chosen,
                         std::function<bool()> stale)
{
    const auto chosenRow = [table] {
        const auto rows = table->selectionModel()->selectedRows();
        return rows.isEmpty() ? -1 : rows.first().row();
    };
    QObject::connect(apply, &QPushButton::clicked, context, [chosenRow, applyRow] {
        applyRow(std::max(0, chosenRow()));
    });
    QObject::connect(table,
                     &QTableWidget::itemSelectionChanged,
                     context,
                     [chosenRow, chosen, stale, apply] {
                         const int row = chosenRow();
                         chosen(row);
                         apply->setEnabled(row >= 0 && !stale());
                     });
    QObject::connect(table, &QTableWidget::cellDoubleClicked, context, [applyRow](int row, int) {
        applyRow(row);
    });
}

} // namespace railyard
