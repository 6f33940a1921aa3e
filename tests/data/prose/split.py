"""Split the writers' corpus once, by PR, into tune (60 %) and check (40 %).

Each digest file holds five entries about five PRs, and a PR is in one file only, so a
split by file is a split by PR. The rule was fixed before any entry was read: the file's
number NN goes to `check` when NN % 5 is 0 or 3, else to `tune`.

    python tests/data/prose/split.py /work/wt/corpus/a /work/wt/corpus/b
    python tests/data/patterns/split.py --add /work/h7     # a later writer, beside the rest
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def split_of(name: str) -> str:
    number = int(re.match(r"p[a-z]-(\d+)-", name).group(1))  # type: ignore[union-attr]
    return "check" if number % 5 in (0, 3) else "tune"


def main(folders: list[str], here: Path = HERE) -> None:
    """Copy the writers' digests and gold from `folders` into `here`/tune and `here`/check;
    with `--add` first, next to what is there (a new writer's corpus), else replacing it."""
    add = bool(folders) and folders[0] == "--add"
    folders = folders[1:] if add else folders
    gold: dict[str, list[dict]] = {"tune": [], "check": []}
    for part in gold:
        if add:
            gold[part] = json.loads((here / part / "gold.json").read_text("utf-8"))
            continue
        shutil.rmtree(here / part, ignore_errors=True)
        (here / part).mkdir()
    for folder in map(Path, folders):
        entries = json.loads((folder / "gold.json").read_text("utf-8"))
        for digest in sorted(folder.glob("p?-*.txt")):
            part = split_of(digest.name)
            shutil.copyfile(digest, here / part / digest.name)
            gold[part] += [e for e in entries if e["in_documents"] == [digest.name]]
    for part, entries in gold.items():
        text = json.dumps(sorted(entries, key=lambda e: e["id"]), ensure_ascii=False, indent=1)
        (here / part / "gold.json").write_text(text + "\n", "utf-8")
        print(part, len(entries), "entries")


if __name__ == "__main__":
    main(sys.argv[1:])
