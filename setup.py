"""Build hook: ship the Claude Code skills inside the package.

The skills live at the repository root in `skills/` (where Claude Code's plugin loader and
a source checkout expect them). A wheel has only the package, so `build_py` copies them
into `doc4llm/skills_data/`, where `doc4llm skills install` finds them after
`pip install <wheel>`. All other metadata is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SKILLS = Path(__file__).resolve().parent / "skills"


class BuildPyWithSkills(build_py):
    """build_py, then skills/ -> <build_lib>/doc4llm/skills_data/."""

    def run(self) -> None:
        super().run()
        if not SKILLS.is_dir():
            raise SystemExit(f"doc4llm build: {SKILLS} is missing; the wheel would ship no skills")
        dest = Path(self.build_lib) / "doc4llm" / "skills_data"
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(SKILLS, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithSkills})
