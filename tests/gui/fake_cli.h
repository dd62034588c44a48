#pragma once
// A stand-in for shardscope-cli: a shell script that writes a given typed ending to the file
// after --ending, prints one English stderr line and exits 1 — so a test can tell whether the
// GUI phrased the typed ending or showed the CLI's text.
#include <QFile>
#include <QTemporaryDir>

namespace shardscope::testing {

inline QString writeFakeCli(const QTemporaryDir& dir, const QByteArray& endingJson) {
    const QString path = dir.filePath(QStringLiteral("fake-shardscope-cli"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write("#!/bin/sh\n"
            "while [ $# -gt 0 ]; do\n"
            "  if [ \"$1\" = --ending ]; then shift; printf '%s\\n' '" +
            endingJson +
            "' > \"$1\"; fi\n"
            "  shift\n"
            "done\n"
            "echo 'shardscope-cli run: THE CLI TEXT' >&2\n"
            "exit 1\n");
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

// Rank 2 killed in step 3 (steps 1 and 2 complete), as the CLI's --ending writes it.
inline const QByteArray kRank2KilledInStep3 =
    R"json({"kind":"failed","rank":2,"step":3,"signal":9,"cause":"exited (signal 9)","completed_steps":2})json";

// Rank 3 over its memory budget in step 1, seen by mpirun as an exit code: the cause names the
// allocation.
inline const QByteArray kRank3OutOfMemoryInStep1 =
    R"json({"kind":"failed","rank":3,"step":1,"exit_code":1,"cause":"out of memory on rank 3: allocating 25600 bytes of workspace for head would exceed the device capacity of 1500000 bytes (1479880 bytes live)","completed_steps":0})json";

} // namespace shardscope::testing
