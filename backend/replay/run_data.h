#pragma once
// The run's values the replay builds on: RunInfo (the handshake), StepData (a step's events and
// ledger snapshots), the report, failures, and applyEvent (how an event changes a rank's ledger).
//
// Note: they are defined in widgets/run_data.h (plain C++, compiled into this library, see
// backend/replay/CMakeLists.txt) and named here in the replay namespace; replay code and its
// users include this header, never the widgets one.
#include "../../widgets/run_data.h"

namespace shardscope::replay {

using widgets::CategoryBytes;
using widgets::UnitInfo;
using widgets::RunInfo;
using widgets::parseRunInfo;
using widgets::ExposedComm;
using widgets::DeviceReport;
using widgets::RankReport;
using widgets::RunReport;
using widgets::parseRunReport;
using widgets::FailureInfo;
using widgets::kTrackedUnits;
using widgets::RankState;
using widgets::LedgerState;
using widgets::applyEvent;
using widgets::StepData;
using widgets::StepPtr;
using widgets::StepList;

} // namespace shardscope::replay
