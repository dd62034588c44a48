#!/usr/bin/env bash
# scripts/chaos.sh N [BUILD_BIN] — N rounds of random faults against random short runs.
#
# Each round starts `shardscope-cli run` (tiny or small, 1–4 ranks, a random strategy, ranks as
# mpirun processes or as threads with --shared-device) writing --json, --trace and --ending
# into a fresh folder, and injects one fault at a random moment: none, SIGKILL or SIGSTOP of a
# random rank, SIGKILL or SIGSTOP of mpirun, SIGTERM to the CLI, or outputs on a full file
# system (a 64 KiB tmpfs where mounting is allowed, else RLIMIT_FSIZE of 64 KiB), SIGTERM to
# mpirun (a cluster scheduler's), or — instead of the CLI — the worker run directly with
# --shared-device and then SIGTERM or SIGHUP to it. Rounds save a checkpoint every step
# (--save-every 1) unless the disk is full. After the round it checks what the CLI documents:
#   - exit code 0, 1 (the job failed) or 2 (bad input) — never a signal's;
#   - stderr: nothing on success, else exactly one line "shardscope-cli run: …" that is not
#     mpirun's boilerplate, "Unknown error" or a bare exception name;
#   - SIGTERM is reported as such, and a rank process stopped or killed (of several) is the
#     rank the message names;
#   - no process of the round left 5 s after the CLI exited, and its private stream folder gone;
#   - no output half-written: no *.partial, the JSON and the ending parse, the recording is
#     whole records ending with End; on exit 0 the JSON exists;
#   - nothing after a stop: `latest` does not move once the job has ended, and it is at most one
#     step past the steps the ending counts (rank 0 commits a step's save before its summary);
#   - SIGTERM to mpirun is named as a signal from outside; the worker run directly exits
#     128 + the signal with one line and a whole recording.
# Every violation is one line "VIOLATION round R: …"; the last line is the count. Exit code 0
# when there were none, 1 otherwise. Runs are nice'd; a round takes a few seconds.
set -u

rounds=${1:?usage: scripts/chaos.sh N [BUILD_BIN]}
bin=${2:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}
cli="$bin/shardscope-cli"
[ -x "$cli" ] || { echo "chaos.sh: $cli not found (build shardscope-cli and shardscope-worker)" >&2; exit 2; }
work=$(mktemp -d /tmp/shardscope-chaos-XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
have_mpirun=0; command -v mpirun > /dev/null && have_mpirun=1
# SIGHUP (signal 1) ignored by whoever started this script (nohup): bit 0 of SigIgn.
hup_ignored=$(( 0x$(awk '/^SigIgn/ {print $2}' /proc/$$/status) & 1 ))

violations=0
violation() {
    violations=$((violations + 1))
    echo "VIOLATION round $round ($desc): $*"
}

# The pids of this round's processes (the seed is the marker; never the CLI itself).
job_pids() { pgrep -f -- "--seed $marker( |\$)" | grep -vx "$cli_pid" || true; }
# The worker processes (one per rank under mpirun; the one holding every rank thread otherwise).
rank_pids() {
    pgrep -f -- "^[^ ]*shardscope-worker .*--seed $marker( |\$)" || true
}
mpirun_pid() { pgrep -f -- "^[^ ]*(mpirun|orterun) .*--seed $marker( |\$)" | head -1; }

# Whole records (u32 length, u8 type, u32 CRC-32C, payload) after the 12-byte header, the last
# one End (6).
check_recording() {
    python3 - "$1" << 'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
if data[:8] != b'SSTRACE\n': sys.exit('bad magic')
at, last = 12, None
while at < len(data):
    if at + 9 > len(data): sys.exit('cut inside a record header at byte %d' % at)
    n = struct.unpack_from('<I', data, at)[0]
    if at + 9 + n > len(data): sys.exit('cut inside a record at byte %d' % at)
    last = data[at + 4]
    at += 9 + n
if last != 6: sys.exit('does not end with an End record')
EOF
}

check_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2> /dev/null; }

faults=(none kill_rank stop_rank kill_mpirun stop_mpirun term_cli full_disk term_mpirun worker_signal)
worker="$bin/shardscope-worker"
# The step of DIR/latest (0: none).
latest_step() { sed -n 's/^step-\([0-9]*\)$/\1/p' "$1/latest" 2> /dev/null | head -1; }
strategies=(ddp zero1 zero2 zero3 fsdp)
can_mount=0
if [ "$(id -u)" = 0 ] && mkdir -p "$work/probe" && mount -t tmpfs -o size=64k tmpfs "$work/probe" 2> /dev/null; then
    umount "$work/probe" && can_mount=1
fi

for round in $(seq 1 "$rounds"); do
    marker=$((4200000 + RANDOM * 32 + round % 32))
    model=$([ $((RANDOM % 4)) = 0 ] && echo small || echo tiny)
    ranks=$((1 + RANDOM % 4))
    strategy=${strategies[$((RANDOM % 5))]}
    shared=$([ $have_mpirun = 0 ] || [ $((RANDOM % 3)) = 0 ] && echo 1 || echo 0)
    steps=$((20 + RANDOM % 300))
    [ "$model" = small ] && steps=$((steps / 10 + 2))
    fault=${faults[$((RANDOM % ${#faults[@]}))]}
    [ "$fault" = term_mpirun ] && [ $have_mpirun = 1 ] && [ "$ranks" -gt 1 ] && shared=0
    [ "$fault" = worker_signal ] && shared=1
    delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.2 + (r % 150) / 100 }')
    desc="$model ranks=$ranks $strategy steps=$steps $([ "$shared" = 1 ] && echo shared-device || echo mpirun) fault=$fault@${delay}s"
    out="$work/r$round"
    mkdir -p "$out"
    mounted=0
    if [ "$fault" = full_disk ] && [ $can_mount = 1 ] && mount -t tmpfs -o size=64k tmpfs "$out"; then mounted=1; fi
    args=(run --model "$model" --ranks "$ranks" --strategy "$strategy" --steps "$steps" --seed "$marker"
          --stall-timeout 5 --json "$out/r.json" --trace "$out/r.sstrace" --ending "$out/ending.json")
    [ "$shared" = 1 ] && args+=(--shared-device)
    [ "$fault" != full_disk ] && args+=(--save "$out/ck" --save-every 1)
    if [ "$fault" = worker_signal ]; then
        # The worker alone: the run's flags without the CLI's launcher flags.
        wargs=(--model "$model" --shared-device --ranks "$ranks" --strategy "$strategy" --steps 100000
               --seed "$marker" --trace "$out/r.sstrace" --save "$out/ck" --save-every 1)
        nice "$worker" "${wargs[@]}" > "$work/stdout" 2> "$work/stderr" &
    elif [ "$fault" = full_disk ] && [ $mounted = 0 ]; then
        (ulimit -f 64; exec nice "$cli" "${args[@]}") > "$work/stdout" 2> "$work/stderr" &
    else
        nice "$cli" "${args[@]}" > "$work/stdout" 2> "$work/stderr" &
    fi
    cli_pid=$!

    # Note the private stream folder while the job runs (from the --stream argument).
    folder=""
    t_end=$(awk -v d="$delay" 'BEGIN { print d * 10 }')
    for _ in $(seq 1 "${t_end%.*}"); do
        if [ -z "$folder" ]; then
            for p in $(job_pids); do
                f=$(tr '\0' '\n' < "/proc/$p/cmdline" 2> /dev/null | grep -A1 -x -- --stream | tail -1)
                [ -n "$f" ] && folder=$(dirname "$f") && break
            done
        fi
        sleep 0.1
    done
    victim=""
    vrank=""
    case $fault in
        kill_rank | stop_rank)
            pids=($(rank_pids))
            [ ${#pids[@]} -gt 0 ] && victim=${pids[$((RANDOM % ${#pids[@]}))]}
            if [ -n "$victim" ]; then
                vrank=$(tr '\0' '\n' < "/proc/$victim/environ" 2> /dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
                kill "-$([ $fault = kill_rank ] && echo KILL || echo STOP)" "$victim" 2> /dev/null
                desc="$desc rank=${vrank:-?}"
            fi ;;
        kill_mpirun | stop_mpirun)
            victim=$(mpirun_pid)
            [ -n "$victim" ] && kill "-$([ $fault = kill_mpirun ] && echo KILL || echo STOP)" "$victim" 2> /dev/null ;;
        term_cli) kill -TERM "$cli_pid" 2> /dev/null ;;
        term_mpirun)
            victim=$(mpirun_pid)
            [ -n "$victim" ] && kill -TERM "$victim" 2> /dev/null ;;
        worker_signal)
            # Not SIGINT: a background job of a non-interactive shell starts with it ignored,
            # and the worker keeps an ignored signal ignored (as nohup expects).
            # SIGHUP only where it is not ignored already (under nohup the worker inherits it
            # ignored and, as nohup expects, keeps it so: the run would go on).
            wsig=$(shuf -n1 -e TERM HUP)
            [ "$hup_ignored" = 1 ] && wsig=TERM
            desc="$desc SIG$wsig"
            kill "-$wsig" "$cli_pid" 2> /dev/null ;;
    esac

    # The CLI must end: the stall timeout (5 s) + teardown, with room for slow machines.
    for _ in $(seq 1 600); do kill -0 "$cli_pid" 2> /dev/null || break; sleep 0.1; done
    if kill -0 "$cli_pid" 2> /dev/null; then
        violation "the CLI did not exit within 60 s"
        # Where it hangs, for whoever reads the log: every thread's stack.
        if command -v gdb > /dev/null; then
            for p in "$cli_pid" $(job_pids); do
                echo "  stacks of $p ($(tr '\0' ' ' < /proc/$p/cmdline 2> /dev/null | cut -c1-80)):"
                timeout 30 gdb -p "$p" -batch -ex "thread apply all bt 12" 2> /dev/null \
                    | grep -E '^(Thread|#)' | sed 's/^/    /' | head -80
            done
        fi
        kill -KILL "$cli_pid" 2> /dev/null
    fi
    wait "$cli_pid" 2> /dev/null
    code=$?

    # Nothing after the stop: `latest` stays where it was when the job ended.
    ck_latest=$(latest_step "$out/ck")
    sleep 1
    [ "$(latest_step "$out/ck")" = "$ck_latest" ] || violation "a checkpoint was committed after the job ended ($ck_latest -> $(latest_step "$out/ck"))"
    if [ -n "$ck_latest" ] && [ -f "$out/ending.json" ]; then
        done_steps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("completed_steps", 0))' "$out/ending.json" 2> /dev/null)
        [ -n "$done_steps" ] && [ "$ck_latest" -gt $((done_steps + 1)) ] && violation "latest is step $ck_latest but the ending counts $done_steps steps: the job went on after the stop"
    fi

    # Exit code and message as documented.
    err=$(cat "$work/stderr")
    lines=$(printf '%s' "$err" | grep -c '')
    if [ "$fault" = worker_signal ]; then
        case $code:$err in
            "$((128 + $(kill -l "$wsig"))):shardscope-worker: interrupted by SIG$wsig after step "*) ;;
            *) violation "the worker run directly: exit $code, stderr: $err" ;;
        esac
        partial=$(find "$out" -name '*.partial' 2> /dev/null)
        [ -n "$partial" ] && violation "partial files left: $partial"
        why=$(check_recording "$out/r.sstrace" 2>&1) || violation "the recording is broken: $why"
        echo "round $round: $desc -> exit $code${err:+: $err}"
        rm -rf "$out"
        continue
    fi
    case $code in
        0) [ -n "$err" ] && violation "exit 0 with stderr: $err"
           [ -f "$out/r.json" ] || violation "exit 0 without the JSON report" ;;
        1 | 2)
            [ "$lines" = 1 ] || violation "exit $code with $lines stderr lines: $(printf '%s' "$err" | head -3 | tr '\n' '|')"
            case $err in
                "shardscope-cli run: "*) ;;
                *) violation "stderr is not one 'shardscope-cli run: …' line: $err" ;;
            esac
            case $err in
                *"reported to the developers"* | *"Unknown error"* | *"std::"* | *"bad_alloc"*)
                    violation "an unhelpful message: $err" ;;
            esac ;;
        *) violation "exit code $code: $err" ;;
    esac
    [ "$fault" = term_cli ] && [ "$code" != 0 ] && case $err in *"interrupted by SIGTERM"*) ;; *) violation "SIGTERM not reported: $err" ;; esac
    [ "$fault" = term_mpirun ] && [ -n "$victim" ] && [ "$code" != 0 ] && case $err in *"from outside"*) ;; *) violation "SIGTERM to mpirun not named: $err" ;; esac
    # A rank process of several that was stopped or killed is the one named.
    if [ -n "$vrank" ] && [ "$ranks" -gt 1 ] && [ "$code" = 1 ]; then
        case $fault:$err in
            stop_rank:*"rank $vrank is stuck "*) ;;
            kill_rank:*"rank $vrank exited (signal 9)"*) ;;
            *) violation "rank $vrank got $fault but the message says: $err" ;;
        esac
    fi

    # Nothing left running, the folder gone.
    sleep_until=$((SECONDS + 5))
    while [ -n "$(job_pids)" ] && [ $SECONDS -lt $sleep_until ]; do sleep 0.2; done
    left=$(job_pids)
    if [ -n "$left" ]; then
        violation "left running: $(for p in $left; do tr '\0' ' ' < /proc/$p/cmdline | cut -c1-60; echo; done | tr '\n' '|')"
        for p in $left; do kill -CONT "$p"; kill -KILL "$p"; done 2> /dev/null
    fi
    [ -n "$folder" ] && [ -e "$folder" ] && violation "private folder left: $folder"

    # No output half-written.
    partial=$(find "$out" -name '*.partial' 2> /dev/null)
    [ -n "$partial" ] && violation "partial files left: $partial"
    [ -f "$out/r.json" ] && ! check_json "$out/r.json" && violation "the JSON report does not parse"
    [ -f "$out/ending.json" ] && ! check_json "$out/ending.json" && violation "the ending does not parse"
    if [ -f "$out/r.sstrace" ]; then
        why=$(check_recording "$out/r.sstrace" 2>&1) || violation "the recording is broken: $why"
    fi
    echo "round $round: $desc -> exit $code${err:+: $err}"

    [ $mounted = 1 ] && umount "$out"
    rm -rf "$out"
done
echo "violations: $violations"
[ "$violations" = 0 ]
