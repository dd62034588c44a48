#pragma once
// A real checkpoint for GUI tests: one step of the tiny model saved by the real shardscope-cli
// (rank threads), so the Checkpoints page reads what a run writes.
#include "cli_process.h"

#include <QDir>
#include <QString>
#include <string>

namespace shardscope::testing {

// Saves `steps` step(s) of `strategy` on `ranks` rank threads into `dir` (every `every` steps
// too when > 0; as `stages` pipeline stages when > 1). Empty on success, else the CLI's exit
// code and stderr.
inline QString saveTinyCheckpoint(const QString& dir, int ranks, const std::string& strategy,
                                  int steps = 1, int every = 0, int stages = 1) {
    std::vector<std::string> args{"run",
                                  "--model",
                                  "tiny",
                                  "--shared-device",
                                  "--ranks",
                                  std::to_string(ranks),
                                  "--strategy",
                                  strategy,
                                  "--steps",
                                  std::to_string(steps),
                                  "--no-events",
                                  "--save",
                                  dir.toStdString()};
    if (every > 0) args.insert(args.end(), {"--save-every", std::to_string(every)});
    if (stages > 1) args.insert(args.end(), {"--pp", std::to_string(stages)});
    std::string cli = SHARDSCOPE_BIN_DIR;
    cli.append("/shardscope-cli"); // (appended: GCC 12 at -O1 misreads "literal" + string)
    const CliResult r = runProgram(cli, args);
    if (r.exitCode == 0) return {};
    return QStringLiteral("shardscope-cli exited %1: %2")
        .arg(r.exitCode)
        .arg(QString::fromStdString(r.err));
}

} // namespace shardscope::testing
