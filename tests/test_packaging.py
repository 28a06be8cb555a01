"""A plain (non-editable) build ships the catalogue inside the package."""

import glob
import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_wheel_ships_the_catalogue_and_every_package(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), ROOT], check=True, timeout=300)
    (wheel,) = glob.glob(str(tmp_path / "tfdet-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped_yaml = {n for n in names if n.startswith("tfdet/catalog_data/") and n.endswith(".yaml")}
    source_yaml = {"tfdet/catalog_data/" + os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "catalog", "*.yaml"))}
    assert shipped_yaml == source_yaml and len(source_yaml) >= 2
    assert "tfdet/catalog_data/schema.json" in names
    packages = {os.path.relpath(d, ROOT).replace(os.sep, "/") + "/__init__.py"
                for d, _, files in os.walk(os.path.join(ROOT, "tfdet")) if "__init__.py" in files}
    assert packages <= names, sorted(packages - names)
    templates = {os.path.relpath(p, ROOT).replace(os.sep, "/")
                 for p in glob.glob(os.path.join(ROOT, "tfdet", "report", "templates", "*.j2"))}
    assert templates and templates <= names
    assert "tfdet/__main__.py" in names and "tfdet/py.typed" in names
    assert any(n.endswith("entry_points.txt") for n in names)
