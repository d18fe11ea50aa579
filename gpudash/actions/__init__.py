"""What a user can ask gpudash for, one module each, called by every face (CLI, TUI, and those to come).

An action takes plain arguments and callbacks (progress, status, a result as it arrives), runs what it
must (device code always in the child-process runner), remembers what is to be remembered, and returns
data: the JSON contracts' dicts, or the records behind them. It never prints, never parses a command line
and never imports Textual; the faces word the messages and draw the text (gpudash.render).

    session   what every action needs: the config, the replay file, plugin directories, the machine
    info      the devices, their spec precisions and a reading (`gpudash info`)
    probe     run each precision and check its numbers; remember the result (`gpudash probe`)
    bench     the built-in sweep, plugin benchmarks, and the bench history (`gpudash bench`)
    profiles  calibration profiles: save, load, compare; the presets (`bench --save/--load/--compare`)
    check     every plugin check on the devices (`gpudash check`)
    plugins   the plugin manager for the session's plugin directories, and the listing (`gpudash plugins`)
    export    gather facts, recommend training settings, write the file (`gpudash export`)
    snapshot  record this machine for replay (`gpudash snapshot`)
    processes identify a GPU process and signal it (SIGTERM/SIGKILL from the dashboard)
    host      the host's CPU, memory, swap and load (the dashboard's host line)
"""
