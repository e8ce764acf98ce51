#!/usr/bin/python3
"""tests/doc_blocks.py on crafted pages: one page it must pass, and one page per way a page must
fail (each failure named with the block's line).
    tests/doc_blocks_selftest.py BUILD"""
import subprocess
import sys
import tempfile
from pathlib import Path

runner = Path(__file__).resolve().parent / "doc_blocks.py"
build = Path(sys.argv[1]).resolve()

GOOD = """# A page

<!-- synopsis -->
```
simprec round --format F --rounding R [--sr-bits N] [--seed S] [--overflow inf|saturate|nan]
              [--no-subnormals] [--report]
```

<!-- file: numbers.txt -->
```text
0.1
```

```sh
simprec round --format bf16 --rounding rne < numbers.txt
answer=42
```
<!-- output -->
```text
0x3dcd ...
```

```sh
echo "still $answer"
```

```python
import simprec
print(simprec.formats()[0]["name"])
```
<!-- output -->
```text
bf16
```

<!-- gpu-only -->
```python
simprec.validate(kernel, device="cuda")
```

<!-- ci -->
```sh
./scripts/test.sh
```

<!-- heavy -->
```sh
exit 1
```

```toml
key = 1
```
"""

BAD = {
    "an unmarked unlabelled block": ("```\nsimprec round\n```\n", ":1: a ``` block with no marker"),
    "a synopsis leaving out options": (
        "<!-- synopsis -->\n```\nsimprec round --format F --rounding R\n```\n",
        "leaves out --no-subnormals, --overflow, --report, --seed, --sr-bits"),
    "a synopsis with an option the tool lacks": (
        "<!-- synopsis -->\n```\nsimprec numerics SPEC [--format F] [--json] [--list] [--fast]\n```\n",
        "`simprec numerics` has no option --fast"),
    "a sample output the block does not print": (
        "```sh\necho 0x3dcd\n```\n<!-- output -->\n```text\n0x3dce\n```\n",
        ":5: the sample output's line `0x3dce`"),
    "an output block after a block that does not run": (
        "<!-- gpu-only -->\n```sh\nnvidia-smi\n```\n<!-- output -->\n```text\nGPU 0\n```\n",
        ":6: an output block that follows no block"),
    "a failing sh block": ("```sh\ntrue\n```\n\n```sh\nfalse\necho never\n```\n",
                           ":5: the block failed (exit status 1)"),
    "a failing python block": ("```python\nprint(torch)\n```\n", ":1: the block failed"),
    "an indented code block": ("Run\n\n    simprec formats\n", ":3: an indented code block"),
    "a python synopsis with a wrong name": (
        "<!-- synopsis -->\n```python\nsimprec.no_such_function(1)\n```\n",
        "simprec.no_such_function: no no_such_function"),
    "a python synopsis with a wrong keyword": (
        "<!-- synopsis -->\n```python\n>>> simprec.round(x, \"bf16\", sead=1)\n```\n",
        "simprec.round() takes no keyword sead"),
    "a ci block .ci/run does not run": ("<!-- ci -->\n```sh\n./scripts/other.sh\n```\n",
                                        ".ci/run does not run `./scripts/other.sh`"),
    "a gpu-only block that is not bash": ("<!-- gpu-only -->\n```sh\nif then fi (\n```\n", "not bash"),
    "a marker without its reason": ("<!-- not-run -->\n```sh\nx\n```\n", "needs its text after the colon"),
}


def run(source, page, *extra):
    out = subprocess.run([str(runner), str(source), str(build), page, *extra], capture_output=True,
                         text=True)
    return out.returncode, out.stdout + out.stderr


def main():
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder)
        (source / ".ci").mkdir()
        (source / ".ci/run").write_text("#!/bin/sh\n./scripts/setup.sh && ./scripts/test.sh\n")
        (source / "tests").mkdir()
        (source / "tests/CMakeLists.txt").write_text("")
        (source / "docs").mkdir()
        (source / "docs/good.md").write_text(GOOD)
        rc, out = run(source, "docs/good.md")
        if rc != 0 or "docs/good.md: 3 blocks run" not in out or "still 42" not in out:
            failures.append(f"the good page failed or ran the wrong blocks:\n{out}")
        rc, out = run(source, "docs/good.md", "--expect", "no such text")
        if rc == 0 or "the output lacks `no such text`" not in out:
            failures.append(f"--expect of text the page does not print passed:\n{out}")
        rc, out = run(source, "docs/good.md", "--heavy")
        if rc == 0 or "good.md:47: the block failed" not in out:
            failures.append(f"--heavy did not run the heavy block:\n{out}")
        for what, (text, message) in BAD.items():
            (source / "docs/bad.md").write_text(text)
            rc, out = run(source, "docs/bad.md")
            if rc == 0 or message not in out:
                failures.append(f"{what}: exit status {rc}, expected a failure saying '{message}':\n{out}")
        (source / "docs/bad.md").write_text(BAD["an unmarked unlabelled block"][0])
        (source / "README.md").write_text("")
        rc, out = run(source, "--count")
        if rc == 0 or "unmarked" not in out:
            failures.append(f"--count passed a page with an unmarked block:\n{out}")
    for f in failures:
        print(f"FAIL {f}")
    print(f"{len(BAD) + 4 - len(failures)} of {len(BAD) + 4} checks of the runner hold")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
