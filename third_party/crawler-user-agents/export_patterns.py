#!/usr/bin/env python3
"""Writes patterns.txt (one regular expression a line) from crawler-user-agents.json.

Run after replacing crawler-user-agents.json with another pinned release:
  python3 third_party/crawler-user-agents/export_patterns.py
"""
import json
import pathlib

here = pathlib.Path(__file__).resolve().parent
entries = json.loads((here / "crawler-user-agents.json").read_text())
patterns = [e["pattern"] for e in entries]
assert all("\n" not in p for p in patterns)
(here / "patterns.txt").write_text("".join(p + "\n" for p in patterns))
print(len(patterns), "patterns")
