"""Planted faults for the preflight speed task (tests only: tests/preflight_rank.py points one rank's
SPEED_TARGET here; gpudash has no switch that does this).

- slow_measure: every timed matmul call does its multiplication twice, so the rank really does twice the work
  per call and its measured rate is half its peers' (the same device, the same kernels; nothing is faked in the
  timing itself);
- flipped_measure: the real measurement, but the fingerprint's output has the lowest bit of its first byte
  flipped before hashing, as a one-bit silent corruption in one element would.
"""

from __future__ import annotations

from gpudash.measure.bench.tasks import matmul
from gpudash.preflight.tasks import speed


def slow_measure(**kwargs):
    real = matmul.make_matmul

    def twice(*args, **kw):
        call = real(*args, **kw)

        def run():
            call()
            return call()

        return run

    matmul.make_matmul = twice
    return speed.measure(**kwargs)


def flipped_measure(**kwargs):
    real = speed.output_bytes

    def flipped(torch, tensor) -> bytes:
        data = bytearray(real(torch, tensor))
        data[0] ^= 1
        return bytes(data)

    speed.output_bytes = flipped
    return speed.measure(**kwargs)
