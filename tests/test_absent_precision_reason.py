"""Issue 22: a precision the spec tables call absent (fp4 on a CPU) failing with torch's raw refusal ("ValueError:
Invalid scaling configuration ...") says that the device has no such precision; torch's words stay in the
details (the checks, and details["error"])."""

from __future__ import annotations

import json

from gpudash.cli import main
from gpudash.measure import probe, runner

RAW = "matmul raised ValueError: Invalid scaling configuration. - For TensorWise scaling, a and b should be float8"


def _raised(reason: str = RAW) -> runner.TaskResult:
    check = {"check": "matmul", "ok": False, "raised": True, "reason": reason}
    return runner.TaskResult(runner.Task("x:y"), runner.OK, value={"checks": [check]}, duration_s=0.1)


def test_an_absent_precision_that_raises_says_it_is_absent():
    result = probe.judge("fp4", "absent", None, _raised())
    assert result.verdict == "failed" and result.verified is False
    assert result.failure_reason.startswith("no fp4 on this device: the spec tables list it as absent")
    assert "ValueError" not in result.failure_reason
    assert result.details["error"] == RAW and result.details["checks"][0]["reason"] == RAW


def test_a_native_precision_that_raises_keeps_torch_s_words():
    """Where the spec expects the precision to run, the raw error is the finding itself."""
    result = probe.judge("fp4", "native", None, _raised())
    assert result.failure_reason == RAW and "error" not in result.details


def test_fp4_on_this_cpu(capsys):
    """The real thing: this CPU has no fp4 by the tables; whatever torch does with it, the reason never
    shows a raw exception as the finding."""
    code = main(["probe", "--precisions", "fp4", "--json", "--force"])
    data = json.loads(capsys.readouterr().out)
    fp4 = next(d for d in data["devices"] if d["vendor"] == "cpu")["precisions"]["fp4"]
    assert fp4["support"] == "absent" and code in (0, 1)
    if fp4["verdict"] == "failed" and any(c.get("raised") for c in fp4["checks"]):
        assert fp4["failure_reason"].startswith("no fp4 on this device")
        assert any("Error" in (c.get("reason") or "") for c in fp4["checks"])  # torch's words, in the details
