#!/bin/bash
# node-problem-detector custom plugin: gpudash's health checks as the node condition GPUHealthCritical
# (gpudash-health.json; docs/health.md, "node-problem-detector"). The plugin protocol: exit 0 OK, 1 NonOK,
# anything else Unknown, and the first line of stdout is the condition's message.
#
# `gpudash check` exits 0 when nothing is CRITICAL and 1 when something is, which is this protocol already;
# its own errors (2 bad option or config, 3 could not run) become Unknown. The message names the CRITICAL
# checks and devices, e.g. "gpu.row_remap nvidia:3 (service); gpu.lost nvidia:5 (reboot)".
#
#   GPUDASH       the gpudash command (default: gpudash)
#   GPUDASH_ARGS  more arguments for `gpudash check`, e.g. "--expect-gpus 8"

set -u
# shellcheck disable=SC2086  # GPUDASH and GPUDASH_ARGS may hold several words
report=$(${GPUDASH:-gpudash} check --json ${GPUDASH_ARGS:-} 2>/dev/null)
code=$?
case "$code" in
    0) echo "gpudash check: no CRITICAL result"; exit 0 ;;
    1) ;;
    *) echo "gpudash check could not run (exit $code)"; exit 2 ;;
esac
printf '%s' "$report" | python3 -c '
import json, sys
bad = [c for c in json.load(sys.stdin)["checks"] if c.get("severity") == "CRITICAL"]
words = []
for c in bad:
    action = c.get("action") or "none"
    words.append(c["id"] + " " + c["device"] + ("" if action == "none" else " (" + action + ")"))
print("; ".join(words))
' || echo "gpudash check: CRITICAL"
exit 1
