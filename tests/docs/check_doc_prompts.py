#!/usr/bin/env python3
"""Runs every `$ command` shown in README.md and docs/*.md and checks that it prints what
the page shows under it.

A block is an indented line `$ command` (continued by a trailing backslash), then the
lines indented alike (blank lines included) up to the next `$` or a line indented less:
the expected output, line for
line, of stdout and stderr together (runs of blanks compared as one). A line `...` stands
for any number of lines; output beyond the last line shown is allowed only after one. Commands run one after the
other in one scratch folder per page, where examples/ and tests/ are the checkout's and
`infracc` and `./build/infracc` are the binary under test, so a page may write a file
with one command and read it with the next.

Commands of the reference tools (txt2bin, LogGOPSim) are not run: the project does not
ship or build them. They are listed at the end.

    check_doc_prompts.py <source dir> <infracc binary>
"""
import os
import re
import subprocess
import sys
import tempfile

EXTERNAL = ("txt2bin", "LogGOPSim")


def blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s+)\$ (.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, cmd, line_no = m.group(1), m.group(2), i + 1
        i += 1
        while cmd.endswith("\\") and i < len(lines):
            cmd = cmd[:-1] + " " + lines[i].strip()
            i += 1
        expected = []
        while (i < len(lines) and (lines[i].startswith(indent) or not lines[i].strip())
               and not re.match(r"^\s+\$ ", lines[i])):
            expected.append(lines[i][len(indent):])
            i += 1
        while expected and not expected[-1].strip():
            expected.pop()
        yield line_no, cmd, expected


def plain_commands(path):
    """Indented command lines shown without a prompt or output: (line, command)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"^ {4,}((?:\./)?(?:build/)?infracc .*)$", line)
        if fenced or not m:
            continue
        cmd = m.group(1)
        k = i + 1
        while cmd.rstrip().endswith("\\") and k < len(lines):
            cmd = cmd.rstrip()[:-1] + " " + lines[k].strip()
            k += 1
        yield i + 1, cmd.split(" # ")[0].split("  #")[0].strip()


def inputs_exist(cmd, work):
    """True when every input the command names is there: a page's examples may name the
    reader's own files (fabric.yaml, trace.goal), which are not run."""
    words = cmd.split("|")[0].split()[1:]
    skip_next = False
    for w in words:
        if skip_next:
            skip_next = False
            continue
        if w in ("-o", "&&"):
            skip_next = w == "-o"
            continue
        if w.startswith("-"):
            m = re.match(r"^-[\w-]+=(.*)$", w)
            value = m.group(1) if m else ""
            if re.search(r"\.(ya?ml|json|goal|bin|txt|placemap|kernels|spc|vef|et)$", value) \
                    and not w.startswith("-o="):
                if not os.path.exists(os.path.join(work, value)):
                    return False
            continue
        if not os.path.exists(os.path.join(work, w.rstrip("/"))):
            return False
    return True


def squeeze(s):
    return " ".join(s.split())


def mismatch(expected, got):
    """None when `got` is what `expected` shows, else (the line shown, the line printed
    there). The lines must follow each other as shown; a line `...` stands for any number
    of lines, so the page may show the start, the end or pieces of a long output."""
    got = list(got)
    while got and not got[-1].strip():
        got.pop()
    # The pieces between `...` lines, each a run of consecutive lines.
    pieces, piece = [], []
    for e in expected:
        if e.strip() == "...":
            pieces.append(piece)
            piece = []
        else:
            piece.append(squeeze(e))
    pieces.append(piece)
    out = [squeeze(g) for g in got]

    def differs(piece, at):   # the first line of `piece` that differs at `at`, or None
        for k, line in enumerate(piece):
            if at + k >= len(out):
                return line, "(the end of the output)"
            if out[at + k] != line:
                return line, got[at + k]
        return None

    # The first piece is anchored at the start, the last at the end (when there are two
    # or more); those between are found at their first place after the one before, which
    # leaves the most room for the rest.
    at = 0
    for n, piece in enumerate(pieces):
        if n == 0:
            d = differs(piece, 0)
            if d:
                return d
            at = len(piece)
            if len(pieces) == 1 and at < len(out):
                return "(the end of the output)", got[at]
        elif n == len(pieces) - 1:
            start = len(out) - len(piece)
            if start < at:
                return piece[0] if piece else "(more output)", "(the end of the output)"
            d = differs(piece, start)
            if d:
                return d
        else:
            found = next((k for k in range(at, len(out) - len(piece) + 1)
                          if differs(piece, k) is None), None)
            if found is None:
                return piece[0], "(nowhere after the lines before it)"
            at = found + len(piece)
    return None


def main():
    source, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    pages = [os.path.join(source, "README.md")] + sorted(
        os.path.join(source, "docs", f) for f in os.listdir(os.path.join(source, "docs"))
        if f.endswith(".md"))
    failures, ran, external, plain_ran, plain_skipped = [], 0, [], 0, 0
    for page in pages:
        found = list(blocks(page))
        plain = list(plain_commands(page))
        if not found and not plain:
            continue
        with tempfile.TemporaryDirectory(prefix="infracc-docs-") as work:
            for d in ("examples", "tests"):
                os.symlink(os.path.join(source, d), os.path.join(work, d))
            os.makedirs(os.path.join(work, "build"))
            os.makedirs(os.path.join(work, "docs"))   # pictures the pages write
            os.symlink(binary, os.path.join(work, "build", "infracc"))
            env = dict(os.environ, PATH=os.path.join(work, "build") + os.pathsep +
                       os.environ.get("PATH", ""))
            for line_no, cmd, expected in found:
                where = f"{os.path.relpath(page, source)}:{line_no}"
                program = cmd.split()[0]
                if program in EXTERNAL:
                    external.append(f"{where}: {cmd}")
                    continue
                run = subprocess.run(["bash", "-c", cmd.split(" # ")[0]], cwd=work, env=env,
                                     capture_output=True, text=True, timeout=300)
                ran += 1
                got = (run.stdout + run.stderr).split("\n")
                diff = mismatch(expected, got)
                if diff is not None:
                    failures.append(f"{where}: `{cmd}` (exit {run.returncode}): the page shows\n"
                                    f"    {diff[0]}\n  where it prints\n    {diff[1]}")
            # Commands shown without output: those whose inputs are all there must succeed.
            for line_no, cmd in plain:
                where = f"{os.path.relpath(page, source)}:{line_no}"
                if not inputs_exist(cmd, work):
                    plain_skipped += 1
                    continue
                run = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], cwd=work,
                                     env=env, capture_output=True, text=True, timeout=300)
                plain_ran += 1
                # `| head` closes the pipe early: infracc then stops writing and exits 74
                # (EX_IOERR) without a message, as the shell shows nothing of it.
                if run.returncode != 0 and not ("|" in cmd and run.returncode == 74):
                    failures.append(f"{where}: `{cmd}` exits {run.returncode}:\n    " +
                                    "\n    ".join(run.stderr.strip().split("\n")[:6]))
    for f in failures:
        print(f)
    print(f"{ran} commands with their output and {plain_ran} without run, {len(failures)} "
          f"failed; {plain_skipped} not run (they name the reader's files)")
    for e in external:
        print(f"not run (a reference tool): {e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
