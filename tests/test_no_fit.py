"""Issue 22: a model that does not fit in memory even at a batch of one. `gpudash export` printed
"batch None x None" and exited 0; it now says it does not fit and what would make it fit, and exits 1."""

from __future__ import annotations

from pathlib import Path

import tomllib

from gpudash.cli import main
from gpudash.contracts.validation import problems
from gpudash.models import DeviceInfo
from gpudash.recommend import facts_for, recommend
from gpudash.recommend.facts import BatchTrial, ModelMemory

RTX_3060 = str(Path(__file__).resolve().parent.parent / "examples" / "snapshots" / "rtx-3060.json")
GIB = 1024**3
GPU = DeviceInfo(vendor="nvidia", index=0, name="GPU 12 GB", compute_capability="8.6", memory_total_bytes=12 * GIB)


def test_export_of_a_model_that_does_not_fit_exits_1_and_says_what_would_fit(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text("[model]\nlayers = 80\nhidden = 8192\nheads = 64\nseq_len = 4096\n")  # a 65 B model
    out = tmp_path / "gpudash.toml"
    code = main(["--config", str(config), "--replay", RTX_3060, "export", "--bench", "none", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert "None" not in err and "the model does not fit in memory" in err
    assert "does not fit" in err and "a smaller model" in err and "lower precision" in err
    assert "gradient checkpointing would not help" in err  # the weights alone are too big: say so
    tree = tomllib.loads(out.read_text())  # the file is still written, with the reason
    assert tree["batch"]["fits"] is False and "size" not in tree["batch"]
    assert "does not fit" in tree["reasons"]["batch.fits"]
    assert problems("export", tree) == []


def test_a_model_that_fits_exits_0_and_says_so(tmp_path, capsys):
    out = tmp_path / "gpudash.toml"
    assert main(["--replay", RTX_3060, "export", "--bench", "none", "-o", str(out)]) == 0
    tree = tomllib.loads(out.read_text())
    assert tree["batch"]["fits"] is True and tree["batch"]["size"] >= 1
    assert "batch None" not in capsys.readouterr().err


def test_one_sample_s_activations_too_big_names_gradient_checkpointing():
    mem = ModelMemory(
        "m",
        param_count=10_000_000,
        activation_bytes_per_sample=40 * GIB,
        dtype="bfloat16",
        method="analytic",
        provenance="estimated",
    )
    s = recommend(facts_for(GPU, model_memory=mem, host_logical_cores=4))
    assert s.value("batch.fits") is False and s.value("batch.size") is None
    reason = s.get("batch.fits").reason
    assert "one sample's activations take 40,960 MiB" in reason and "gradient checkpointing" in reason
    assert "would not help" not in reason


def test_trial_steps_that_ran_out_of_memory_at_once():
    trial = BatchTrial(largest_ok=0, first_oom=1, trials=((1, False),), limit=256, dtype="bfloat16")
    s = recommend(facts_for(GPU, batch_trial=trial, host_logical_cores=4))
    assert s.value("batch.fits") is False
    reason = s.get("batch.fits").reason
    assert "not even one sample trained" in reason and "a batch of 1 ran out of memory" in reason
    assert "gradient checkpointing" in reason and "a smaller model" in reason


def test_nothing_known_leaves_fits_out():
    s = recommend(facts_for(GPU, host_logical_cores=4))
    assert s.value("batch.method") == "none" and s.value("batch.fits") is None
