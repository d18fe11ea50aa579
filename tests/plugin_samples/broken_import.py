"""Fails at import: a dependency that is not installed."""

import gpudash_sample_dependency_that_does_not_exist  # noqa: F401
