"""The checks of the blocks that do not run (tests/doc_blocks.py): synopses against the tools'
--help, a Python synopsis against the package, sample output against a block's run, the syntax of
GPU-only blocks, CI's own command against .ci/run."""
import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from doc_pages import PYTHON, SHELL

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
