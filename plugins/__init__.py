"""gpudash's built-in plugins.

Each subpackage is a plugin like any third-party one: it imports only `gpudash.plugins_api` (and torch,
lazily, inside functions), and gpudash finds it through the entry points in its own pyproject.toml
(`[project.entry-points.gpudash]`), so it works the same from a wheel as from a checkout.
"""
