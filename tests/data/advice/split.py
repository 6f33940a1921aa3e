"""Split entries.json deterministically into tune (~60 %) and check (~40 %).

An entry goes to `tune` when int(sha1(id), 16) % 100 < 60, else to `check`.
The split depends only on the id, so adding entries never moves old ones.
"""

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def bucket(entry_id: str) -> str:
    h = int(hashlib.sha1(entry_id.encode("utf-8")).hexdigest(), 16)
    return "tune" if h % 100 < 60 else "check"


def main() -> None:
    entries = json.loads((HERE / "entries.json").read_text(encoding="utf-8"))
    parts = {"tune": [], "check": []}
    for e in entries:
        parts[bucket(e["id"])].append(e)
    for name, items in parts.items():
        (HERE / f"{name}.json").write_text(
            json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    print(f"total {len(entries)}: tune {len(parts['tune'])}, check {len(parts['check'])}")


if __name__ == "__main__":
    main()
