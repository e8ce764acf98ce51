#!/usr/bin/python3
"""Runs the code blocks of README.md and docs/*.md as they stand, and checks the ones that cannot run.

Every fenced block of a page is one of:
  run        a ```sh (```bash) or ```python block with no marker: run, in page order, in one
             empty folder that looks like a checkout (the checkout's top-level entries linked,
             `build` the build folder, its bin/ first on PATH); sh blocks in one bash (-e -u
             -o pipefail), so a variable or `cd` carries to the next; each python block in a
             fresh /usr/bin/python3 with PYTHONPATH=build/python.
  data       ```toml, ```json, ```cpp, ```c, ```cmake, ```text: not code one runs.
  marked     an HTML comment on the line just before the fence says why it does not run, and
             what checks it instead:
     <!-- synopsis -->      a usage synopsis. Each `simprec SUB ...` command in it must name
                            exactly the options `simprec SUB --help` lists (a Python synopsis:
                            every `simprec.NAME` it calls exists and takes the keywords given).
     <!-- output -->        output of the block before it, which must be run: every line of the
                            sample must appear in what it printed, in order (`...` in a line
                            stands for any text; a line `...` for lines left out).
     <!-- sample: TEST -->  a message no block of the page prints (a crash, a timeout); TEST, a
                            file of the checkout, is the test that checks it.
     <!-- file: NAME -->    a data block written to NAME in the folder before the blocks after it
                            run (so that the page's own commands check it).
     <!-- ci -->           CI's own command: .ci/run must hold each of its lines.
     <!-- heavy -->         run only with --heavy (the ctest label `heavy`: over a minute).
     <!-- gpu-only -->      needs a GPU (or CUDA build): only its syntax is checked.
     <!-- not-run: WHY -->  anything else, with the reason (its syntax is checked).
     <!-- run-by: TEST -->  run as written by another ctest, TEST, which tests/CMakeLists.txt adds.
Other comments before a block (`<!-- walkthrough -->`, naming it for a test) are ignored. A ```sh,
```python or unlabelled block with no marker that the runner does not run fails the page.

A build without the Python package (the sanitizer build) runs the runner with --without-python:
the python blocks, the sh blocks that name build/python and the synopses that need the package
are then skipped, and counted as such.

  tests/doc_blocks.py SOURCE BUILD PAGE [--heavy] [--without-python] [--expect TEXT]...
  tests/doc_blocks.py SOURCE BUILD --count                              count every page's blocks
"""
import argparse
import ast
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
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


# ---- synopses ---------------------------------------------------------------------------------

def read_help(argv, env, cwd, cache={}):
    """The option groups (the spellings of one option, `-j,--threads`) and the subcommands that
    `ARGV --help` lists (CLI11's and argparse's layouts)."""
    key = tuple(argv)
    if key not in cache:
        out = subprocess.run([*argv, "--help"], capture_output=True, text=True, env=env, cwd=cwd)
        if out.returncode != 0:
            sys.exit(f"`{' '.join(argv)} --help` failed:\n{out.stdout}{out.stderr}")
        groups, subcommands, section = [], set(), ""
        for line in out.stdout.splitlines():
            if re.match(r"^[A-Za-z][A-Za-z ]*:$", line):
                section = line.lower()
            elif section in ("options:", "optional arguments:") and re.match(r"^\s+-", line):
                names = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", re.split(r"\s{2,}", line.strip())[0])
                if not {"-h", "--help", "--version"} & set(names):
                    groups.append(set(names))
            elif section == "subcommands:":
                m = re.match(r"^\s+([a-z][\w-]*)\s", line)
                if m:
                    subcommands.add(m.group(1))
        cache[key] = (groups, subcommands)
    return cache[key]


def synopsis_commands(block, simprec, build, env):
    """The commands of a synopsis block: {name: (help argv, the options named)}. A command is
    `simprec [SUBCOMMAND...] ...` or `[VAR=VALUE...] /usr/bin/python3 SCRIPT.py ...`; indented
    lines continue the command above."""
    commands, current = [], None
    for line in block.text.splitlines():
        words = re.sub(r"\s#.*", "", line).replace("\\", " ").replace("'", " ").replace('"', " ").split()
        if not line.startswith((" ", "\t")):
            current = None
            start = next((i for i, w in enumerate(words) if w == "simprec" or w.endswith("python3")), None)
            if start is not None:
                current = words[start:]
                commands.append((words[:start], current))
        elif current is not None:
            current.extend(words)
    named = {}
    for assignments, words in commands:
        if words[0] == "simprec":
            argv, words = [simprec], words[1:]
            while words and words[0] in read_help(argv, env, None)[1]:
                argv.append(words.pop(0))
            name = " ".join(["simprec"] + argv[1:])
        else:
            script_env = dict(env)
            for a in assignments:
                var, _, value = a.partition("=")
                script_env[var] = ":".join(str(build / v[len("build/"):]) if v.startswith("build/") else v
                                           for v in value.split(":"))
            argv, words, name = ["/usr/bin/python3", words[1]], words[2:], words[1]
            argv = (argv, script_env)
        tokens = set()
        for word in words:
            tokens.update(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", word))
        entry = named.setdefault(name, [argv, set()])
        entry[1].update(tokens)
    return named


def check_cli_synopses(blocks, simprec, source, build, env):
    """The commands of a page's synopses name exactly the options their --help lists: each option a
    synopsis names exists, and the page's synopses of a command together name them all."""
    errors, named, first = [], {}, {}
    for block in blocks:
        commands = synopsis_commands(block, simprec, build, env)
        if not commands:
            errors.append(f"{block.where}: a synopsis with no `simprec` or `python3 SCRIPT` command")
        for name, (argv, options) in commands.items():
            groups = help_of(argv, env, source)[0]
            known = set().union(*groups) if groups else set()
            if options - known:
                errors.append(f"{block.where}: `{name}` has no option {', '.join(sorted(options - known))}")
            named.setdefault(name, [argv, set()])[1].update(options)
            first.setdefault(name, block)
    for name, (argv, said) in named.items():
        missing = [min(g, key=len) if not any(n.startswith("--") for n in g) else
                   next(n for n in sorted(g) if n.startswith("--"))
                   for g in help_of(argv, env, source)[0] if not g & said]
        if missing:
            errors.append(f"{first[name].where}: the page's synopsis of `{name}` leaves out "
                          f"{', '.join(sorted(missing))} (its --help lists them)")
    return errors


def help_of(argv, env, source):
    if isinstance(argv, tuple):  # a script, with its own environment, run from the checkout
        return read_help(argv[0], argv[1], source)
    return read_help(argv, env, None)


def check_python_synopsis(block, env):
    """Every simprec.NAME(...) the block calls exists and takes the keywords given."""
    lines = [l for l in block.text.splitlines()]
    if any(l.startswith(">>>") for l in lines):
        lines = [l[4:] for l in lines if l.startswith((">>> ", "... "))]
    source = "\n".join(lines)
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [f"{block.where}: not Python: {e}"]
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            chain, f = [], node.func
            while isinstance(f, ast.Attribute):
                chain.insert(0, f.attr)
                f = f.value
            if isinstance(f, ast.Name) and f.id == "simprec" and chain:
                calls.append((".".join(chain), [k.arg for k in node.keywords if k.arg]))
    if not calls:
        return [f"{block.where}: a Python synopsis that calls nothing of simprec"]
    probe = ("import importlib, inspect, json, re, sys\n"
             "import simprec\n"
             "calls = json.loads(sys.argv[1]); errors = []\n"
             "for name, keywords in calls:\n"
             "    obj = simprec\n"
             "    parts = name.split('.')\n"
             "    for i, part in enumerate(parts):\n"
             "        if not hasattr(obj, part):\n"
             "            try: importlib.import_module('simprec.' + '.'.join(parts[:i + 1]))\n"
             "            except ImportError: pass\n"
             "        if not hasattr(obj, part):\n"
             "            errors.append(f'simprec.{name}: no {part}'); obj = None; break\n"
             "        obj = getattr(obj, part)\n"
             "    if obj is None: continue\n"
             "    try:\n"
             "        sig = inspect.signature(obj)\n"
             "        if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()): continue\n"
             "        accepted = set(sig.parameters)\n"
             "    except (TypeError, ValueError):  # pybind11: the signatures head the docstring\n"
             "        heads = [l for l in (obj.__doc__ or '').splitlines() if l.startswith(parts[-1] + '(')]\n"
             "        if not heads: continue\n"
             "        accepted = {a for h in heads for a in re.findall(r'[(,]\\s*(\\w+)\\s*:', h)}\n"
             "    for k in keywords:\n"
             "        if k not in accepted:\n"
             "            errors.append(f'simprec.{name}() takes no keyword {k}')\n"
             "print('\\n'.join(errors))\n")
    out = subprocess.run(["/usr/bin/python3", "-c", probe, json.dumps(calls)], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        return [f"{block.where}: checking the Python synopsis failed:\n{out.stderr}"]
    return [f"{block.where}: {e}" for e in out.stdout.split("\n") if e]


def check_syntax(block):
    if block.lang in PYTHON:
        try:
            ast.parse(block.text)
        except SyntaxError as e:
            return [f"{block.where}: not Python: {e}"]
    elif block.lang in SHELL:
        out = subprocess.run(["bash", "-n"], input=block.text, capture_output=True, text=True)
        if out.returncode != 0:
            return [f"{block.where}: not bash: {out.stderr.strip()}"]
    return []


def check_ci(block, source):
    ci = (Path(source) / ".ci/run").read_text()
    return [f"{block.where}: .ci/run does not run `{line}`" for line in commands_of(block) if line not in ci]


def commands_of(block):
    return [l.split("#")[0].strip() for l in block.text.splitlines() if l.split("#")[0].strip()]


def output_matches(sample, actual):
    """Every line of the sample, in order, among the actual lines; `...` matches any text."""
    lines = [l.rstrip() for l in actual.splitlines()]
    at = 0
    for want in (l.rstrip() for l in sample.splitlines()):
        if want in ("", "..."):
            continue
        pattern = re.compile("^" + ".*".join(re.escape(part) for part in want.split("...")) + "$")
        while at < len(lines) and not pattern.match(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


# ---- running a page ---------------------------------------------------------------------------

def needs_python(block):
    """Whether a block needs the built Python package."""
    return block.lang in PYTHON or "build/python" in block.text


def run_page(source, build, page, heavy, expected, without_python):
    blocks = parse(source, page)
    skipped = [b for b in blocks if without_python and needs_python(b) and b.kind in ("", "heavy", "synopsis")]
    simprec = str(build / "bin/simprec")
    # BUILD_DIR: the build folder of scripts/setup.sh and scripts/demo.sh, the one under test.
    # sh blocks get no PYTHONPATH: a block that needs the package says so, as a reader must.
    env = dict(os.environ, PATH=f"{build / 'bin'}:{os.environ['PATH']}", BUILD_DIR=str(build))
    env.pop("PYTHONPATH", None)
    python_env = dict(env, PYTHONPATH=str(build / "python"))
    errors, ran, timings = [], {}, []
    for b in blocks:
        if classify(b) is None:
            errors.append(f"{b.where}: a ```{b.lang} block with no marker that the runner cannot run "
                          "(label it sh, python or text, or mark it: tests/doc_blocks.py's docstring)")
        elif b in skipped:
            continue
        elif b.kind == "synopsis" and b.lang in PYTHON:
            errors += check_python_synopsis(b, python_env)
        elif b.kind in ("gpu-only", "not-run"):
            errors += check_syntax(b)
        elif b.kind == "ci":
            errors += check_ci(b, source)
        elif b.kind == "sample" and not (Path(source) / b.note).is_file():
            errors.append(f"{b.where}: no test file {b.note}")
        elif b.kind == "run-by":
            cmake = (Path(source) / "tests/CMakeLists.txt").read_text()
            if f"add_test(NAME {b.note}" not in cmake:
                errors.append(f"{b.where}: no ctest {b.note} runs it")
    errors += check_cli_synopses([b for b in blocks if b.kind == "synopsis" and b.lang not in PYTHON
                                  and b not in skipped], simprec,
                                 source, build, env)
    previous = None
    for b in blocks:
        if b.kind == "output" and (previous is None or classify(previous) != "run"):
            errors.append(f"{b.where}: an output block that follows no block the runner runs")
        if b.kind != "output":
            previous = b
    if errors:
        return blocks, errors, ran, timings, skipped
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for entry in Path(source).iterdir():
            if entry.name not in ("build", ".git") and not entry.name.startswith("build-"):
                (tmp / entry.name).symlink_to(entry)
        (tmp / "build").symlink_to(build)
        work = tmp / ".doc_blocks"
        work.mkdir()
        # One bash runs the page: sh blocks as they stand (a variable or `cd` carries to the next),
        # python blocks each in a fresh interpreter; each block's output goes to its own file.
        script, order = ["set -euo pipefail"], []
        for b in blocks:
            if b.kind == "file":
                script.append(f"cat > {shlex.quote(b.note)} <<'DOC_BLOCKS_FILE_END'\n{b.text}DOC_BLOCKS_FILE_END")
                continue
            if classify(b) != "run" or (b.kind == "heavy") != heavy or b in skipped:
                continue
            n = len(order)
            order.append(b)
            # Each block's start: the time, and the CPU time the page's commands have used so far
            # (bash's `times`: user and system time of the finished children).
            script.append(f"times > {work}/cpu; echo {n} $(date +%s.%N) $(tail -n 1 {work}/cpu) >> {work}/started;"
                          f" exec > {work}/out{n} 2>&1")
            if b.lang in PYTHON:
                (work / f"block{n}.py").write_text(b.text)
                script.append(f"PYTHONPATH={shlex.quote(str(build / 'python'))} /usr/bin/python3 {work}/block{n}.py")
            else:
                script.append(b.text)
        script.append(f"times > {work}/cpu; echo done $(date +%s.%N) $(tail -n 1 {work}/cpu) >> {work}/started")
        (work / "page.sh").write_text("\n".join(script) + "\n")
        rc = subprocess.run(["bash", "--norc", "--noprofile", str(work / "page.sh")], cwd=tmp, env=env,
                            stdin=subprocess.DEVNULL).returncode
        started = [l.split() for l in (work / "started").read_text().splitlines()] if order else []
        for i, (n, t, *cpu) in enumerate(started[:len(order)]):
            b = order[int(n)]
            end = started[i + 1] if i + 1 < len(started) else None
            wall = (float(end[1]) if end else time.time()) - float(t)
            used = cpu_seconds(end[2:]) - cpu_seconds(cpu) if end else float("nan")
            timings.append((b, wall, used))
            ran[b.line] = (work / f"out{n}").read_text(errors="replace")
            print(f"=== {b.where} ({b.lang}, {wall:.1f} s, CPU {used:.1f} s)\n{b.text}--- output\n{ran[b.line]}",
                  flush=True)
        if rc != 0:
            failed = order[int(started[-1][0])] if started and started[-1][0] != "done" else None
            errors.append(f"{failed.where if failed else page}: the block failed (exit status {rc})")
    if not errors:
        previous = None
        for b in blocks:
            if b.kind == "output" and previous.line in ran:
                miss = output_matches(b.text, ran[previous.line])
                if miss is not None:
                    errors.append(f"{b.where}: the sample output's line `{miss}` is not in what "
                                  f"{previous.where} printed (in this order)")
            if b.kind != "output":
                previous = b
        everything = "\n".join(ran.values())
        errors += [f"{page}: the output lacks `{e}`" for e in expected if e not in everything]
    return blocks, errors, ran, timings, skipped


def cpu_seconds(times):
    """User plus system seconds of a line of bash's `times` (`1m2.500s 0m0.250s`)."""
    total = 0.0
    for reading in times:
        minutes, seconds = re.fullmatch(r"(\d+)m([\d.]+)s", reading).groups()
        total += 60 * int(minutes) + float(seconds)
    return total


def count(source, pages):
    total = {}
    rows = []
    for page in pages:
        tally = {}
        for b in parse(source, page):
            c = classify(b)
            what = ("unmarked" if c is None else "run (heavy)" if b.kind == "heavy" else
                    c if c in ("run", "data") else f"{c} ({b.kind})")
            tally[what] = tally.get(what, 0) + 1
            total[what] = total.get(what, 0) + 1
        rows.append((page, tally))
    for page, tally in rows:
        print(f"{page}: " + ", ".join(f"{n} {k}" for k, n in sorted(tally.items())))
    print("all pages: " + ", ".join(f"{n} {k}" for k, n in sorted(total.items())))
    return total.get("unmarked", 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("build", type=Path)
    parser.add_argument("page", nargs="?")
    parser.add_argument("--heavy", action="store_true", help="run the blocks marked heavy (only them)")
    parser.add_argument("--without-python", action="store_true",
                        help="the build has no Python package: skip what needs it")
    parser.add_argument("--expect", action="append", default=[], help="text the page's output must hold")
    parser.add_argument("--count", action="store_true", help="count every page's blocks")
    args = parser.parse_args()
    source, build = args.source.resolve(), args.build.resolve()
    if args.count:
        pages = ["README.md"] + sorted(str(p.relative_to(source)) for p in (source / "docs").glob("*.md"))
        sys.exit(1 if count(source, pages) else 0)
    blocks, errors, ran, timings, skipped = run_page(source, build, args.page, args.heavy, args.expect,
                                                     args.without_python)
    for e in errors:
        print(f"FAIL {e}", file=sys.stderr)
    tally = {}
    for b in blocks:
        c = classify(b)
        tally[c] = tally.get(c, 0) + 1
    left = len([b for b in blocks if classify(b) == "run" and (b.kind == "heavy") != args.heavy
                and b not in skipped])
    print(f"{args.page}: {len(ran)} blocks run ({sum(t[1] for t in timings):.1f} s, "
          f"CPU {sum(t[2] for t in timings):.1f} s), "
          f"{tally.get('checked', 0)} checked, {tally.get('marked', 0)} marked, {tally.get('data', 0)} data"
          + (f", {len(skipped)} skipped (no Python package)" if skipped else "")
          + (f", {left} left to the other tier" if left and not errors else ""))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
