"""ROCm workaround checks: the bf16 conversion bug class, hipBLASLt support, FFT stability, known issues.

Device checks (bf16 -> fp32 with known values, the CPU round trip, bf16 through a saved file, NaN/Inf in a
bf16 cache) run on a live ROCm GPU and skip elsewhere. Table checks (hipBLASLt support by ROCm version,
known issues by gfx target, the RDNA1 FFT routing) also run on replayed machines. Every result carries its
remediation and the environment variables to set. Facts and sources are in `facts.py`.
"""
