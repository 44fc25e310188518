"""The package as its README installs it into a virtual environment: the
wheel built offline (python3 -m build --no-isolation --wheel), a
`python3 -m venv` of its own (no system site packages: a python3-shardid
installed on the machine is not seen), `pip install --force-reinstall` of
the wheel with no index, and the venv's Python, isolated (`-I`: no
PYTHONPATH, no user site, not the current directory), imports it from the
venv.  Every command runs in an environment without the caller's PYTHON*,
PIP_* and VIRTUAL_ENV variables: a PYTHONPATH naming the source tree, or
a pip configured elsewhere, changes nothing.  Needs the
source tree (pyproject.toml beside tests/), the build module and a venv
with pip (Debian: python3-build, python3-setuptools, python3-wheel,
python3-venv); skipped without them, as in debian/tests/python, which
tests the Debian package instead."""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def clean_env():
    """The caller's environment less what steers Python or pip."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "PIP_")) and k not in ("VIRTUAL_ENV", "PYTHONPATH")}

TREE = os.path.dirname(HERE)


def missing():
    if not os.path.exists(os.path.join(TREE, "pyproject.toml")):
        return "no source tree (pyproject.toml) beside the tests"
    for mod in ("build", "setuptools", "wheel", "ensurepip"):
        if importlib.util.find_spec(mod) is None:
            return f"no {mod} module for {sys.executable}"
    return None


@unittest.skipIf(missing(), missing())
class VenvInstall(unittest.TestCase):
    def test_wheel_in_a_venv(self):
        with tempfile.TemporaryDirectory() as tmp:
            # built from a copy: setuptools writes build/ and *.egg-info
            src = os.path.join(tmp, "src")
            shutil.copytree(TREE, src, ignore=shutil.ignore_patterns(
                "tests", "build", "dist", "*.egg-info", "__pycache__"))
            dist = os.path.join(tmp, "dist")
            subprocess.run(
                [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, src],
                check=True, capture_output=True, env=clean_env())
            wheels = os.listdir(dist)
            self.assertEqual(len(wheels), 1, wheels)
            self.assertRegex(wheels[0], r"^shardid-\d+\.\d+\.\d+-py3-none-any\.whl$")
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-I", "-m", "venv", venv],
                           check=True, capture_output=True, env=clean_env())
            py = os.path.join(venv, "bin", "python")
            subprocess.run([py, "-I", "-m", "pip", "install", "--no-index", "--no-cache-dir",
                            "--force-reinstall", "--isolated",
                            "--disable-pip-version-check", "-q", os.path.join(dist, wheels[0])],
                           check=True, capture_output=True, env=clean_env())
            out = subprocess.run(
                [py, "-I", "-c", "import shardid; print(shardid.__file__); "
                 "print(shardid.to_shortcode(4185136929178974185))"],
                cwd=tmp, check=True, capture_output=True, text=True,
                env=clean_env()).stdout.split("\n")
            self.assertTrue(out[0].startswith(os.path.join(venv, "lib")), out[0])
            self.assertEqual(out[1], "DoUl90AFPfp")


if __name__ == "__main__":
    unittest.main()
