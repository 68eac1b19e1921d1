"""The pytest plugin under the name pytest loads it by: the pytest11 entry
point of an installed qcheck (pyproject.toml), `-p qcheck.pytest_plugin`,
or pytest_plugins in a conftest.py. The plugin is
qcheck.integrations.pytest_plugin (its text says what it gives); pytest
finds its hooks and fixtures here, on this module."""

from .integrations.pytest_plugin import (_cuda_missing, assert_passes, pytest_addoption, pytest_configure,
                                         pytest_generate_tests, pytest_runtest_setup, qcheck_case, qcheck_fuzz)

__all__ = ["_cuda_missing", "assert_passes", "pytest_addoption", "pytest_configure", "pytest_generate_tests",
           "pytest_runtest_setup", "qcheck_case", "qcheck_fuzz"]
