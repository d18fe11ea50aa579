#!/bin/bash
# Slurm Prolog: gpudash preflight on every GPU of this node (a local torchrun, one rank per GPU) and a drain
# of this node, with the findings as the reason, when a rank fails (docs/fleet.md, "gpudash preflight").
# In slurm.conf:
#
#   Prolog=/etc/slurm/gpudash-preflight-prolog.sh
#
# gpudash preflight exits 0 when every rank passed, 1 when a rank failed, differs or was lost, 2 for a bad
# option, 3 when it could not run. Only 1 drains (the JSON names the failing checks); 2 and 3 are logged and
# the job runs, since the node was not shown to be bad. On a drain the script exits 1, so Slurm does not start
# the job here (it requeues it).
#
# Environment (all optional):
#   PREFLIGHT          the preflight command, printing JSON (default: torchrun on every GPU, below)
#   PREFLIGHT_ARGS     more arguments, e.g. "--expect-gpus 8 --precisions bf16,fp16"
#   PREFLIGHT_TIMEOUT  seconds the whole preflight may take (default 300)
#   PYTHON             a Python 3 to read the JSON (default: python3)
#   SCONTROL           the scontrol command (default: scontrol)

set -u
PREFLIGHT=${PREFLIGHT:-torchrun --standalone --nproc-per-node gpu -m gpudash preflight}
PYTHON=${PYTHON:-python3}
SCONTROL=${SCONTROL:-scontrol}
NODE=$(hostname -s)

log() { logger -t gpudash-preflight "$*" 2>/dev/null || echo "gpudash-preflight: $*" >&2; }

# shellcheck disable=SC2086  # PREFLIGHT and PREFLIGHT_ARGS hold several words
report=$(timeout "${PREFLIGHT_TIMEOUT:-300}" $PREFLIGHT --json ${PREFLIGHT_ARGS:-} 2>/dev/null)
code=$?
if [ "$code" -eq 0 ]; then
  exit 0
fi
if [ "$code" -ne 1 ]; then
  log "preflight could not judge this node (exit $code); not draining"
  exit 0
fi
# The CRITICAL findings whose action is not "none" (a job's own layout, e.g. two ranks on one GPU, is none).
reason=$(printf '%s' "$report" | "$PYTHON" -c '
import json, sys
doc = json.load(sys.stdin)
found = [(r["rank"], f) for r in doc["ranks"] for f in r["findings"]]
found += [(x["rank"], x["finding"]) for x in doc.get("lost", [])]
bad = ["rank %d %s: %s" % (n, f["id"], f["summary"]) for n, f in found
       if f["severity"] == "CRITICAL" and f["action"] != "none"]
print("; ".join(bad)[:200])
' 2>/dev/null)
if [ -z "$reason" ]; then
  log "preflight failed without a finding that drains (exit 1); not draining"
  exit 0
fi
log "draining $NODE: $reason"
"$SCONTROL" update nodename="$NODE" state=drain reason="gpudash preflight: $reason"
exit 1
