"""The README's Python example runs as written and prints what its comment says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using it from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README's Python section has no python code block"
    code = match.group(1)
    assert len(code.strip().splitlines()) <= 10, "the README promises a ten-line example"
    # In a fresh process and folder, as a reader would run it.
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[1 2 3 4]"
    assert (tmp_path / "example.zarrdb").is_file()
