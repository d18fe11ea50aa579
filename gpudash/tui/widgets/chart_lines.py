"""The history chart's series and their colours, apart from the chart itself: the card's gauges and the detail
view use them, and importing them must not import plotext (the chart's library, about 1 MiB and 7 ms at
start-up), which only an opened card needs."""

# series name -> (legend label, theme colour variable); the card's gauges use the same colours
LINES = {"memory_pct": ("mem %", "$primary"), "utilization_pct": ("util %", "$accent")}
