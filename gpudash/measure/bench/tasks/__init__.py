"""Child-side benchmark tasks: the only benchmark code that imports torch.

The parent (`gpudash.measure.bench`; `bench_jobs` names the tasks) runs these through
`gpudash.measure.runner`, in a child process with a time limit. Every function takes JSON-able keyword
arguments and returns JSON-able data: `matmul.sweep` (throughput over a sweep of shapes) and
`bandwidth.run` (memory copies).
"""
