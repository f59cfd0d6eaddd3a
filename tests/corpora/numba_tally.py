"""Count the Numba corpus test's cases: compiled, fallen back, and the commonest reasons.

Usage: ``S2S_AD_TEST_NUMBA_TALLY=/tmp/tally.jsonl pytest -m slow tests/targets/test_numba_backend.py``,
then ``python tests/corpora/numba_tally.py /tmp/tally.jsonl [how many reasons]``.  A reason is the fallback
message without the function's name and the user's line (so that one construct counts once).
"""
from __future__ import annotations

import collections
import json
import re
import sys


def reason(message: str) -> str:
    """What Numba refused, without where: ``... cannot compile d_f at line 3 of x.py (...): WHAT; it runs ...``."""
    found = re.search(r"cannot compile \S+(?: at line \d+ of \S+ \((.*?)\))?: (.*?); it runs as Python", message, re.S)
    if not found:
        return message[:160]
    statement, what = found.group(1) or "", found.group(2)
    what = re.sub(r"\s+", " ", what)
    return f"{what[:160]}   [e.g. {statement[:80]}]" if statement else what[:200]


def main(path: str, top: int = 30) -> None:
    compiled = fallen = 0
    reasons: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            case = json.loads(line)
            if not case["fallbacks"]:
                compiled += 1
                continue
            fallen += 1
            for message in case["fallbacks"]:
                full = reason(message)
                key = full.split("   [e.g.")[0]
                reasons[key] += 1
                examples.setdefault(key, full)
    print(f"{compiled} compiled, {fallen} fell back")
    for key, count in reasons.most_common(top):
        print(f"{count:4d}  {examples[key]}")


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:3]))
