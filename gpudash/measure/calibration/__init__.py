"""Calibration profiles (the multi-precision calibration document's format): saving, loading, comparing, and
the named parts' presets whose theoretical peaks a profile can be measured against."""
