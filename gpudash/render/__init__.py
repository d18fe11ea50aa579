"""Plain text that every face shows: tables, glyphs, progress lines, the export file's text.

Each module turns one action's data (the JSON contracts' dicts, or the records behind them) into text,
with no terminal control, so the CLI prints it and the TUI draws it the same way; colour (ANSI SGR codes) only
where the face asks for it through a Style:

    formatting  units (GiB, %, W), the plain-text table, a process list
    info        the `info` table: devices, MIG instances, processes, the reasons for n/a
    style       colour for a terminal, or none
    probe       the probe table, its glyphs and legend, a probe progress line
    bench       the bench tables (built-in sweep and plugin benchmarks), presets, saved profiles
    progress    a benchmark's progress: a bar on a terminal, a line per finished task on a pipe
    check       the check results table
    plugins     the plugin listing
    export      the export file (TOML with a reason beside every value, or JSON)
    toml        the small TOML writer the export uses

Nothing here imports Textual, torch, or an action: a face hands data in and gets text back.
"""
