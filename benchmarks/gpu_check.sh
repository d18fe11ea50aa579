#!/usr/bin/env bash
# One prepared run of gpudash's real-device paths, for a lent NVIDIA H100 or H200 (issue 28), in at most
# --budget seconds (default 330). docs/benchmarks.md, "Real GPU check", has the exact device call.
#
#   bash benchmarks/gpu_check.sh [--install] [--python PY] [--steps a,b,...] [--budget S] [--cap S] [--dry-run]
#
# Each step is one gpudash command under its own time limit (the smaller of its cap and what is left of the
# budget), so one hang costs that step, not the run. Without a GPU (no nvidia-smi, or it lists none) it says
# so and runs the same steps on the CPU. Results go to $OUT (a new temporary folder when OUT is unset):
#   summary.json     every step: command, status, exit code, time limit, wall time, stderr's last lines
#   steps.tar.gz     every step's stdout and stderr (NN-name.out, NN-name.err) and gpudash's remembered state
#   snapshot.json    the `snapshot --redact` recording of this machine
#   gpu_check.log    what this script printed
# Both summary.json and steps.tar.gz are rewritten after every step, so a run stopped from outside still
# leaves what it finished. Few files on purpose: the device tool brings back at most 8 from $OUT.
#
# Exit: 0 every step ran and passed; 1 a step failed, timed out or was skipped for lack of time; 2 bad option.
set -uo pipefail
export LC_ALL=C  # EPOCHREALTIME with a dot, whatever the locale

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE="$ROOT/benchmarks"
ALL_STEPS=(install nvidia_smi info info_json snapshot replay probe bench check serve preflight export tui_startup)

usage() {
  sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<'EOF'

options:
  --install      first install gpudash from this working tree (pip --no-deps --no-build-isolation) and the
                 wheels in --wheels into PY's environment (for the lent machine; never needed here)
  --wheels DIR   the wheels --install adds (default: build/gpu-check-wheels, made by gpu_check_wheels.sh)
  --python PY    the Python that runs gpudash (default: python3)
  --steps LIST   run only these steps, comma-separated, in the usual order
  --budget S     whole seconds for the run, all steps together (default 330)
  --cap S        most seconds any one step may take (default: each step's own)
  --dry-run      print each step's command and time limit, run nothing
EOF
  printf 'steps: %s\n' "${ALL_STEPS[*]}"
}

fail_usage() {
  echo "gpu_check: $1" >&2
  exit 2
}

PY=python3
INSTALL=0
DRY=0
BUDGET=330
CAP=""
WANTED=""
WHEELS="$ROOT/build/gpu-check-wheels"
while [ $# -gt 0 ]; do
  case "$1" in
    --install) INSTALL=1 ;;
    --dry-run) DRY=1 ;;
    --python) [ $# -ge 2 ] || fail_usage "--python needs a value"; PY=$2; shift ;;
    --wheels) [ $# -ge 2 ] || fail_usage "--wheels needs a value"; WHEELS=$2; shift ;;
    --steps) [ $# -ge 2 ] || fail_usage "--steps needs a value"; WANTED=$2; shift ;;
    --budget) [ $# -ge 2 ] || fail_usage "--budget needs a value"; BUDGET=$2; shift ;;
    --cap) [ $# -ge 2 ] || fail_usage "--cap needs a value"; CAP=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail_usage "unknown argument '$1' (--help lists the options)" ;;
  esac
  shift
done

[[ "$BUDGET" =~ ^[1-9][0-9]*$ ]] || fail_usage "--budget '$BUDGET': expected whole seconds above 0"
[ -z "$CAP" ] || [[ "$CAP" =~ ^[1-9][0-9]*$ ]] || fail_usage "--cap '$CAP': expected whole seconds above 0"
if [ -n "$WANTED" ]; then
  IFS=',' read -r -a asked <<<"$WANTED"
  for name in "${asked[@]}"; do
    [[ " ${ALL_STEPS[*]} " == *" $name "* ]] || fail_usage "--steps: unknown step '$name' (steps: ${ALL_STEPS[*]})"
  done
fi
command -v "$PY" >/dev/null 2>&1 || fail_usage "--python '$PY': not found"
if [[ "$PY" == */* ]]; then
  PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"  # the steps run elsewhere; a venv's link stays a link
else
  PY=$(command -v "$PY")
fi
if [ "$INSTALL" -eq 1 ] && [ ! -d "$WHEELS" ]; then
  fail_usage "--wheels '$WHEELS': no such folder (make it with benchmarks/gpu_check_wheels.sh)"
fi

OUT=${OUT:-}
if [ -z "$OUT" ]; then
  OUT=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
fi
mkdir -p "$OUT" || fail_usage "OUT='$OUT': cannot create it"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-work.XXXXXX")
STEPS_DIR="$WORK/steps"
mkdir -p "$STEPS_DIR" "$WORK/state" "$WORK/config"
trap 'rm -rf "$WORK"' EXIT  # steps.tar.gz in $OUT holds what it had
exec > >(tee -a "$OUT/gpu_check.log") 2>&1

# gpudash remembers probe and bench results under XDG_STATE_HOME (serve publishes them) and reads a user
# config from XDG_CONFIG_HOME: both are this run's own, so the run reads no one's config and leaves no state.
export XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config" PYTHONUNBUFFERED=1
unset GPUDASH_REPLAY GPUDASH_CONFIG

wanted() {
  [ -z "$WANTED" ] && return 0
  [[ ",$WANTED," == *",$1,"* ]]
}

GPU=0
GPU_LINE="no nvidia-smi on PATH"
if command -v nvidia-smi >/dev/null 2>&1; then
  GPU_LINE=$(timeout 20 nvidia-smi -L 2>&1 | head -n 8)
  if grep -q '^GPU [0-9]' <<<"$GPU_LINE"; then
    GPU=1
  fi
fi
if [ "$GPU" -eq 1 ]; then
  echo "gpu_check: NVIDIA GPU found:"
  printf '  %s\n' "$GPU_LINE"
else
  echo "gpu_check: no NVIDIA GPU here ($(head -n 1 <<<"$GPU_LINE")): running the CPU paths only"
fi
echo "gpu_check: python $PY; results in $OUT; budget ${BUDGET} s"

summary() {  # summary ACTION OPTIONS... [-- COMMAND...]
  "$PY" "$HERE/gpu_check_summary.py" "$1" --work "$WORK" --out "$OUT" "${@:2}"
}
summary start --budget "$BUDGET" --gpu "$GPU" --gpu-line "$GPU_LINE" --python "$PY" --dry-run "$DRY" \
  --root "$ROOT" || fail_usage "--python '$PY': cannot run $HERE/gpu_check_summary.py with it"

DEADLINE=$((SECONDS + BUDGET))
KILL_AFTER=10  # a step that ignores SIGTERM is killed this much later
STEP_NO=0
FAILED=0

# run_step NAME CAP CMD...: run CMD under min(CAP, what is left), record it, refresh summary.json and the tar.
run_step() {
  local name=$1 cap=$2
  shift 2
  wanted "$name" || return 0
  STEP_NO=$((STEP_NO + 1))
  local base limit left start end rc status
  base=$(printf '%02d-%s' "$STEP_NO" "$name")
  [ -n "$CAP" ] && [ "$CAP" -lt "$cap" ] && cap=$CAP
  left=$((DEADLINE - SECONDS - KILL_AFTER - 2))
  limit=$((cap < left ? cap : left))
  if [ "$DRY" -eq 1 ]; then
    printf 'gpu_check: would run %-12s (limit %3d s): %s\n' "$name" "$cap" "$*"
    summary step --name "$name" --file "$base" --status planned --rc -1 --limit "$cap" --start 0 --end 0 -- "$@"
    return 0
  fi
  if [ "$left" -lt 5 ]; then
    echo "gpu_check: $name skipped: the ${BUDGET} s budget is spent"
    summary step --name "$name" --file "$base" --status skipped --rc -1 --limit 0 --start 0 --end 0 -- "$@"
    FAILED=1
    return 0
  fi
  echo "gpu_check: $name (limit $limit s): $*"
  start=$EPOCHREALTIME
  (cd "$WORK" && timeout --kill-after="$KILL_AFTER" "$limit" "$@" <"/dev/null" \
    >"$STEPS_DIR/$base.out" 2>"$STEPS_DIR/$base.err")
  rc=$?
  end=$EPOCHREALTIME
  if [ "$rc" -eq 0 ]; then
    status=ok
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    status=timed_out
  else
    status=failed
  fi
  [ "$status" = ok ] || FAILED=1
  summary step --name "$name" --file "$base" --status "$status" --rc "$rc" --limit "$limit" \
    --start "$start" --end "$end" -- "$@"
}

G=("$PY" -m gpudash)
SNAP="$STEPS_DIR/snapshot.json"

if [ "$INSTALL" -eq 1 ]; then
  run_step install 120 bash "$HERE/gpu_check_install.sh" "$PY" "$WHEELS" "$ROOT"
fi
if [ "$GPU" -eq 1 ]; then
  run_step nvidia_smi 30 nvidia-smi -q
fi
run_step info 45 "${G[@]}" info
run_step info_json 60 "${G[@]}" info --json
run_step snapshot 45 "${G[@]}" snapshot -o "$SNAP" --redact --seconds 4 --interval 0.5  # 9 samples: examples/ holds 5 to 10
if [ -f "$SNAP" ]; then
  cp "$SNAP" "$OUT/snapshot.json"
fi
run_step replay 30 "${G[@]}" info --replay "$SNAP" --json
run_step probe 150 "${G[@]}" probe --json --timeout 45
run_step bench 180 "${G[@]}" bench --quick --json --timeout 150
run_step check 90 "${G[@]}" check --json --timeout 45
run_step serve 45 "$PY" "$HERE/gpu_check_serve.py" --python "$PY" --timeout 30
# torchrun is torch.distributed.run; naming it through PY keeps the launcher and the ranks in one environment.
run_step preflight 150 "$PY" -m torch.distributed.run --standalone --nproc-per-node 1 \
  -m gpudash preflight --json --timeout 45 --wait 90
run_step export 180 "${G[@]}" export --format json -o -
run_step tui_startup 90 "$PY" "$HERE/tui_startup.py" --runs 1 --help-runs 3 --idle-seconds 5

summary finish
if [ "$DRY" -eq 1 ]; then
  echo "gpu_check: dry run: nothing ran; plan in $OUT/summary.json"
  exit 0
fi
echo "gpu_check: done in $SECONDS s; summary in $OUT/summary.json"
exit "$FAILED"
