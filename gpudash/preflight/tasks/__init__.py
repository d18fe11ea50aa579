"""Code that runs in the runner's child process for a preflight rank (torch is imported here only)."""
