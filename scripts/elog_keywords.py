"""E-log keyword statistics from an export: top words, entries per author, logbook and day.

Usage: elog_keywords.py [FILE.json] [TOP_N]
FILE (default elog.json, relative to DATA_DIR unless absolute) is what
`accel-agent logs elog --from -7d --json` prints. Writes elog_keywords.csv
(word, count, entries) to WORK_DIR.
"""
import collections
import csv
import json
import os
import re
import sys

STOP = set("""a an and are as at be been but by for from has have in into is it its of on or
that the this to was were will with not no after before all any can than then there these
they we our out up down per via utc ma min mm h""".split())


def data_path(name):
    return name if os.path.isabs(name) else os.path.join(DATA_DIR or ".", name)


def main(argv):
    name = argv[1] if len(argv) > 1 else "elog.json"
    top = int(argv[2]) if len(argv) > 2 else 15
    with open(data_path(name)) as f:
        export = json.load(f)
    entries = export["entries"] if isinstance(export, dict) else export
    words = collections.Counter()
    entries_with = collections.Counter()
    authors = collections.Counter()
    logbooks = collections.Counter()
    days = collections.Counter()
    for e in entries:
        text = f"{e.get('title', '')} {e.get('text', '')}".lower()
        found = [w for w in re.findall(r"[a-z][a-z0-9:_\-]+", text) if w not in STOP]
        words.update(found)
        entries_with.update(set(found))
        authors[e.get("author") or "?"] += 1
        logbooks[e.get("logbook") or "?"] += 1
        days[(e.get("time") or "")[:10]] += 1
    print(f"{len(entries)} entries, {len(words)} distinct words")
    print("top words: " + ", ".join(f"{w} {c}" for w, c in words.most_common(top)))
    print("authors: " + ", ".join(f"{a} {c}" for a, c in authors.most_common()))
    print("logbooks: " + ", ".join(f"{b} {c}" for b, c in logbooks.most_common()))
    print("per day: " + ", ".join(f"{d} {c}" for d, c in sorted(days.items())))
    with open(os.path.join(WORK_DIR, "elog_keywords.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["word", "count", "entries"])
        for word, count in words.most_common():
            w.writerow([word, count, entries_with[word]])


main(sys.argv)
