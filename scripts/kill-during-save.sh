#!/usr/bin/env bash
# scripts/kill-during-save.sh N [BUILD_BIN] — N times: a run that resumes DIR and saves every
# step into it is killed with SIGKILL at a random instant (a rank process, mpirun, the worker
# holding every rank thread, or the CLI), then DIR must still verify (`checkpoint verify`: the
# step `latest` names is complete and every checksum holds) and resume (`run --resume DIR`).
# A checkpoint that does not is lost. Prints one line per lost checkpoint, then
#   kill-during-save: N kills, S landed inside a save (its temporary folder was left), L lost
# and exits 0 when nothing was lost, 1 otherwise (SIGINT/SIGTERM: the same summary of the kills
# done so far). A progress line every 25 kills. The ranks alternate between mpirun processes
# (when mpirun exists) and --shared-device threads; strategies and world sizes vary, so the
# resuming run also reshards; half the runs save with --save-async.
set -u

kills=${1:?usage: scripts/kill-during-save.sh N [BUILD_BIN]}
bin=${2:-$(cd "$(dirname "$0")/.." && pwd)/build/bin}
cli="$bin/shardscope-cli"
[ -x "$cli" ] || { echo "kill-during-save.sh: $cli not found (build shardscope-cli and shardscope-worker)" >&2; exit 2; }
work=$(mktemp -d /tmp/shardscope-kill-save-XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
have_mpirun=0; command -v mpirun > /dev/null && have_mpirun=1

dir="$work/ck"
strategies=(ddp zero1 zero2 zero3 fsdp fsdp_grad_op)
"$cli" run --model tiny --shared-device --ranks 2 --strategy zero3 --steps 1 --no-events --save "$dir" > /dev/null \
    || { echo "kill-during-save.sh: the first save failed" >&2; exit 2; }

lost=0
inside=0
done_kills=0
summary() { echo "kill-during-save: $done_kills kills, $inside landed inside a save (its temporary folder was left), $lost lost"; }
trap 'summary; rm -rf "$work"; exit $([ $lost = 0 ] && echo 0 || echo 1)' INT TERM
for ((i = 1; i <= kills; i++)); do
    ranks=$((RANDOM % 4 + 1))
    strategy=${strategies[$((RANDOM % ${#strategies[@]}))]}
    threads="--shared-device"
    [ $have_mpirun = 1 ] && [ $((RANDOM % 2)) = 0 ] && [ $ranks -gt 1 ] && threads=""
    async=""
    [ $((RANDOM % 2)) = 0 ] && async="--save-async"
    nice "$cli" run --model tiny $threads --ranks $ranks --strategy $strategy --steps 6 --save-every 1 --no-events \
        $async --resume "$dir" --save "$dir" > /dev/null 2>&1 &
    cli_pid=$!
    # A random instant in the run's first second: saves (fsync-bound) take most of it.
    sleep "0.$(printf '%03d' $((RANDOM % 900 + 50)))"
    victim=$cli_pid
    case $((RANDOM % 3)) in
    0) victim=$cli_pid ;;
    *) # a process of the job: mpirun or the worker under the CLI, or a rank under mpirun
       child=$(pgrep -P "$cli_pid" | head -n 1)
       if [ -n "$child" ]; then
           victim=$child
           grand=$(pgrep -P "$child" | shuf -n 1 2> /dev/null)
           [ -n "$grand" ] && [ $((RANDOM % 2)) = 0 ] && victim=$grand
       fi ;;
    esac
    kill -9 "$victim" 2> /dev/null
    wait "$cli_pid" 2> /dev/null
    # Whatever is left of the job goes (the CLI's own teardown does this; a killed CLI's
    # children follow it by PR_SET_PDEATHSIG): wait until none remain.
    for _ in $(seq 50); do pgrep -f -- "$dir" > /dev/null || break; sleep 0.1; done
    done_kills=$i
    if ls -d "$dir"/*.tmp-* > /dev/null 2>&1; then inside=$((inside + 1)); fi
    rm -rf "$dir"/*.tmp-*
    if ! out=$("$cli" checkpoint verify "$dir" 2>&1); then
        lost=$((lost + 1)); echo "LOST after kill $i: $out"; continue
    fi
    if ! out=$("$cli" run --model tiny --shared-device --ranks 3 --strategy fsdp --steps 1 --no-events --resume "$dir" 2>&1); then
        lost=$((lost + 1)); echo "LOST after kill $i (verified, but does not resume): $(echo "$out" | tail -n 1)"
    fi
    [ $((i % 25)) = 0 ] && [ $i -lt $kills ] && summary
    # Old steps are not needed: keep the folder small over long runs.
    latest=$(cat "$dir/latest" 2> /dev/null)
    for s in "$dir"/step-*; do [ "$(basename "$s")" != "$latest" ] && rm -rf "$s"; done
done
summary
[ $lost = 0 ]
