"""pyproject.toml and environment.yml agree; CI runs the README's test command."""

import re
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_and_environment_list_the_same_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    declared = set(project["dependencies"]) | set(extras["dev"]) | set(extras["gpu"])
    env = (ROOT / "environment.yml").read_text()
    pip = set(re.findall(r"^\s+- ([A-Za-z][^\s#]*)\s*$", env.split("- pip:")[1], re.M))
    assert pip == declared
    assert "transformers==5.1.0" in declared


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = "./run_all.sh --test"
    assert f"{command}   # the test suite" in readme
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == command


def test_the_package_metadata_is_read_without_deprecation_warnings():
    """setuptools >= 77 takes `project.license` as an SPDX expression; the TOML table it had warned
    twice on every `pip install -e .`."""
    pyprojecttoml = pytest.importorskip("setuptools.config.pyprojecttoml")
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dist = pyprojecttoml.apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert dist.metadata.license_expression == "MIT"
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert "setuptools>=77" in build  # the oldest setuptools that reads it
