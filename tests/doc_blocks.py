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
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from doc_block_checks import (check_ci, check_cli_synopses, check_python_synopsis, check_syntax,
                              output_matches)
from doc_pages import PYTHON, classify, parse


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
