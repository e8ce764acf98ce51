#!/usr/bin/env python3
"""Rewrites the slots, parameters and mitigations tables of docs/attention.md from
`simprec numerics --list` (the tables the registries generate; tests/numerics_spec_test.cpp
checks that the page carries them).
    scripts/update_attention_tables.py [SIMPREC]   (default build/bin/simprec)"""
import re
import subprocess
import sys
from pathlib import Path

repo = Path(__file__).resolve().parent.parent
simprec = sys.argv[1] if len(sys.argv) > 1 else str(repo / "build/bin/simprec")
listing = subprocess.run([simprec, "numerics", "--list"], check=True, capture_output=True,
                         text=True).stdout
def section(title):
    return listing.split(f"## {title}\n\n")[1].split("\n## ")[0].strip("\n")


tables = {
    "slots": section("Slots"),
    "parameters": section("Parameters"),
    "mitigations": section("Mitigations"),
}
page = repo / "docs/attention.md"
text = page.read_text()
for name, table in tables.items():
    marker = f"<!-- {name} table: simprec numerics --list -->\n"
    if marker not in text:
        sys.exit(f"docs/attention.md lacks the marker {marker.strip()}")
    text = re.sub(re.escape(marker) + r"(\|.*\n)*", lambda m: marker + table + "\n", text)
page.write_text(text)
