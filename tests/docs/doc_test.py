#!/usr/bin/env python3
"""Runs the shell examples of the documentation and compares their output.

Usage: doc_test.py BIN_DIR FILE.md...

A fenced block whose info string is `console` is an example: a line starting with `$ ` is
a command (a line ending in `\\` continues it), the lines after it up to the next command
are what it prints (stdout and stderr together). The blocks of one file run in order in one
fresh scratch directory (so a tutorial's steps build on each other), each command through
bash, with BIN_DIR first on PATH. Trailing blanks
are ignored. Other blocks are not run.
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(```+|~~~+)\s*(\S*)")


def blocks(path):
    """Yields (line number, lines) of each console block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group(1), m.group(2)
        start = i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        if info == "console":
            yield start + 1, lines[start:j]
        i = j + 1


def examples(block):
    """(command, expected output lines) pairs of one block."""
    out = []
    i = 0
    while i < len(block):
        line = block[i]
        if not line.startswith("$ "):
            i += 1
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i + 1 < len(block):
            i += 1
            cmd = cmd + "\n" + block[i]  # bash joins the lines
        i += 1
        expected = []
        while i < len(block) and not block[i].startswith("$ "):
            expected.append(block[i])
            i += 1
        out.append((cmd, expected))
    return out


def normalize(lines):
    lines = [l.rstrip() for l in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def main():
    bin_dir = os.path.abspath(sys.argv[1])
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), LANG="C.UTF-8")
    env.pop("QUEREUS_DATA", None)
    failures = count = 0
    for md in sys.argv[2:]:
        with tempfile.TemporaryDirectory(prefix="quereus-doc-") as work:
            for line_no, block in blocks(md):
                for cmd, expected in examples(block):
                    count += 1
                    run = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, timeout=60)
                    actual = normalize(run.stdout.decode("utf-8", "replace").split("\n"))
                    if actual != normalize(expected):
                        failures += 1
                        print(f"FAIL: {md}:{line_no}: $ {cmd}")
                        print("--- the document shows")
                        print("\n".join(normalize(expected)))
                        print("--- it prints")
                        print("\n".join(actual))
    print(f"{count} examples, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
