#pragma once

namespace railyard {

// One id per command class, for QUndoCommand::id(): mergeWith() only ever meets its own kind.
enum CommandId {
    ChangeClusterId = 1,
    ChangeTitleId,
    ChangeNotesId,
    ChangeWorkloadId,
    ChangeParallelSizesId,
    ChangeMappingId,
    ChangeRankOrderId,
    RestoreSnapshotId,
    ChangeFaultsId,
    ChangeServingId,
};

} // namespace railyard
