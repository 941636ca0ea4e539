"""The package list only (everything else is in pyproject.toml): the folders features/, experiments/ and configs/
install as rcfr.features, rcfr.experiments and rcfr.configs (pyproject's package-dir), which a static
`packages.find` cannot express."""

from setuptools import find_packages, setup

MAPPED = ("features", "experiments", "configs")
packages = find_packages(include=["rcfr", "rcfr.*"])
for top in MAPPED:
    packages += [f"rcfr.{name}" for name in find_packages(include=[top, f"{top}.*"])]
setup(packages=packages)
