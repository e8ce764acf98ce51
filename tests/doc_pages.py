"""A page's fenced code blocks, each with the marker before it, and what the runner does with it
(tests/doc_blocks.py says what each marker means)."""
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SHELL = {"sh", "bash"}
PYTHON = {"python"}
DATA = {"toml", "json", "cpp", "c", "cmake", "text"}
KINDS = {"synopsis", "output", "sample", "file", "ci", "heavy", "gpu-only", "not-run", "run-by"}
NEEDS_NOTE = {"file", "not-run", "run-by", "sample"}
FENCE = re.compile(r"^```(\S*)\s*$")
MARKER = re.compile(r"^<!--\s*([a-z-]+)(?::\s*(.*?))?\s*-->$")


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    kind: str = ""  # "" when unmarked
    note: str = ""
    comments: list = field(default_factory=list)

    @property
    def where(self):
        return f"{self.page}:{self.line}"

    @property
    def code(self):
        return self.lang in SHELL | PYTHON or self.lang == ""


def parse(source, page):
    """The page's fenced blocks, each with the marker that precedes it."""
    lines = (Path(source) / page).read_text().split("\n")
    blocks, i, in_list = [], 0, False
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            # An indented code block (four spaces after a blank line, outside a list) is code the
            # runner cannot see: it has to be fenced.
            if re.match(r"^\s*([-*+]|\d+\.)\s", lines[i]):
                in_list = True
            elif lines[i] and not lines[i].startswith(" "):
                in_list = False
            if (lines[i].startswith("    ") and lines[i].strip() and i > 0 and not lines[i - 1].strip()
                    and not in_list):
                sys.exit(f"{page}:{i + 1}: an indented code block; fence it (```sh, ```text, ...)")
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if end == len(lines):
            sys.exit(f"{page}:{i + 1}: a code block that never ends")
        block = Block(page, i + 1, m.group(1), "\n".join(lines[i + 1:end]) + "\n")
        j = i - 1
        while j >= 0 and lines[j].startswith("<!--"):
            block.comments.insert(0, lines[j].strip())
            j -= 1
        for comment in block.comments:
            mm = MARKER.match(comment)
            if mm and mm.group(1) in KINDS:
                if block.kind:
                    sys.exit(f"{block.where}: two markers ({block.kind}, {mm.group(1)})")
                block.kind, block.note = mm.group(1), mm.group(2) or ""
                if block.kind in NEEDS_NOTE and not block.note:
                    sys.exit(f"{block.where}: <!-- {block.kind}: ... --> needs its text after the colon")
        blocks.append(block)
        i = end + 1
    return blocks


def classify(block):
    """What the runner does with a block: run, data, checked or marked; None when it may not stay."""
    if block.kind == "heavy":
        return "run"
    if block.kind in ("synopsis", "output", "file", "ci", "run-by"):
        return "checked"
    if block.kind in ("gpu-only", "not-run", "sample"):
        return "marked"
    if block.lang in SHELL | PYTHON:
        return "run"
    if block.lang in DATA:
        return "data"
    return None  # an unlabelled or unknown block with no marker
