"""Measurements: probes (does it work), benchmarks (how fast), checks (known bugs).

Anything that runs device code goes through `gpudash.measure.runner`, in a child process with a time
limit, so a crash or a hang costs one result and never gpudash itself.
"""
