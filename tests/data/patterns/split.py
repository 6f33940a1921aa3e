"""Split the pattern writers' corpus once, by PR, with the rule of `../prose/split.py`.

python tests/data/patterns/split.py /work/wt/corpus/c /work/wt/corpus/d
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    prose = runpy.run_path(str(HERE.parent / "prose" / "split.py"))
    prose["main"](sys.argv[1:], HERE)
