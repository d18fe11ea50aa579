#!/bin/bash
# Slurm Prolog and Epilog: run gpudash's health checks and drain this node, with the reason, when one is
# CRITICAL (docs/health.md, "Slurm"). In slurm.conf:
#
#   Prolog=/etc/slurm/gpudash-health.sh
#   Epilog=/etc/slurm/gpudash-health.sh
#
# Exit codes of `gpudash check --exit-codes nagios`: 0 OK, 1 WARN, 2 CRITICAL, 3 UNKNOWN; gpudash itself exits
# 2 for a bad option or config too, so a drain also needs a CRITICAL result in the JSON report. Only CRITICAL
# drains: a warning, a check that could not answer or a gpudash that could not run is logged, and the job runs. As a Prolog the script then exits 1, so Slurm does
# not start the job on the bad node (it requeues it); as an Epilog it exits 0 (the job has ended).
#
# Environment (all optional):
#   GPUDASH           the gpudash command (default: gpudash)
#   GPUDASH_ARGS      more arguments for `gpudash check`, e.g. "--expect-gpus 8"
#   GPUDASH_TIMEOUT   seconds the whole check may take (default 120)
#   SCONTROL          the scontrol command (default: scontrol)
#   SLURM_SCRIPT_CONTEXT  set by slurmd: prolog_slurmd or epilog_slurmd (default: prolog)

set -u
GPUDASH=${GPUDASH:-gpudash}
SCONTROL=${SCONTROL:-scontrol}
NODE=$(hostname -s)
CONTEXT=${SLURM_SCRIPT_CONTEXT:-prolog_slurmd}

log() { logger -t gpudash-health "$*" 2>/dev/null || echo "gpudash-health: $*" >&2; }

# shellcheck disable=SC2086  # GPUDASH and GPUDASH_ARGS may hold several words
report=$(timeout "${GPUDASH_TIMEOUT:-120}" $GPUDASH check --json --exit-codes nagios ${GPUDASH_ARGS:-} 2>/dev/null)
code=$?

if [ "$code" -ne 2 ]; then
    [ "$code" -ne 0 ] && log "gpudash check on $NODE exited $code (not CRITICAL): the node stays up"
    exit 0
fi

# The CRITICAL results, as "gpu.row_remap nvidia:3 (service)", joined; Slurm keeps the reason on one line.
reason=$(printf '%s' "$report" | python3 -c '
import json, sys
try:
    checks = json.load(sys.stdin)["checks"]
except Exception:
    raise SystemExit  # no report: gpudash did not run (a bad option or config), nothing to drain for
bad = [c for c in checks if c.get("severity") == "CRITICAL"]
words = []
for c in bad:
    action = c.get("action") or "none"
    words.append(c["id"] + " " + c["device"] + ("" if action == "none" else " (" + action + ")"))
if words:
    print(("gpudash: CRITICAL " + "; ".join(words))[:250])
')
if [ -z "$reason" ]; then
    log "gpudash check on $NODE exited 2 without a CRITICAL result (a bad option or config?)"
    exit 0
fi

"$SCONTROL" update nodename="$NODE" state=drain reason="$reason"
log "drained $NODE: $reason"
case "$CONTEXT" in
    epilog*) exit 0 ;;
    *) exit 1 ;;
esac
