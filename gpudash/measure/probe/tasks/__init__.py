"""Child-side precision probes: the code that runs inside the runner's child process and imports torch.

The parent (`gpudash.measure.probe`) never imports these modules; it names `entry:run_probe` as a task
target. Each module holds one kind of check:

  formats      bit layouts of the small float formats, an exact decoder/encoder, the known-value pools
  conversion   round trips device <-> CPU and dtype <-> fp32 on the device, bit for bit
  matmul       a matmul per precision against an fp64 reference, zero/NaN/Inf flags, rate vs fp32
  autocast     a forward and backward step of a small MLP under torch.autocast (GradScaler for fp16)
  tf32         what torch.set_float32_matmul_precision does to an fp32 matmul's error and speed
  claims       what torch itself says about each precision on the device
  timing       interleaved best-of timing with device synchronisation
  entry        `run_probe(device, precision, ...)`: the checks for one precision, as JSON-able data
"""
