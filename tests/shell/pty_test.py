#!/usr/bin/env python3
"""The interactive shell under a pseudo-terminal, as a person would use it.

Usage: pty_test.py QUEREUS_EXECUTABLE

Checks: arrow keys edit the line (no escape codes reach SQL), the history file is written
and Up recalls an entry, TAB completes keywords / tables / dot-commands, Ctrl-C at the prompt
drops the line being typed, Ctrl-C during a long query interrupts it and the session goes on
with its tables intact, and .quit leaves with status 0.
"""
import os
import pty
import re
import select
import signal
import sys
import tempfile
import time

EXE = sys.argv[1]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


class Session:
    def __init__(self, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(EXE, [EXE], env)
        self.out = b""

    def send(self, data):
        os.write(self.fd, data.encode() if isinstance(data, str) else data)

    def read_for(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([self.fd], [], [], max(0, end - time.time()))
            if not r:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.out += chunk

    def expect(self, pattern, timeout=20, what=None):
        """Waits until `pattern` (a regex on the output with escape codes removed) appears
        after the current mark; returns the text up to it and moves the mark past it."""
        end = time.time() + timeout
        rx = re.compile(pattern)
        while True:
            clean = ANSI.sub(b"", self.out).decode("utf-8", "replace")
            m = rx.search(clean, self.mark)
            if m:
                text = clean[self.mark:m.end()]
                self.mark = m.end()
                return text
            if time.time() > end:
                fail(f"timed out waiting for {what or pattern!r}; output since mark:\n{clean[self.mark:]}")
            self.read_for(0.1)

    mark = 0


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main():
    tmp = tempfile.mkdtemp(prefix="quereus-pty-")
    hist = os.path.join(tmp, "history")
    env = dict(os.environ, TERM="xterm", QUEREUS_HISTORY=hist, HOME=tmp, LANG="C.UTF-8")
    s = Session(env)
    s.expect(r"quereus> ", what="the first prompt")

    # 1. Arrow keys edit the line: "select 4 as v;" with the cursor moved left 6 places
    # (before " as v;") gets "2" inserted; Home / End and Ctrl-A / Ctrl-E move too.
    s.send("select 4 as v;")
    s.send("\x1b[D" * 6)
    s.send("2\r")
    text = s.expect(r"\(1 row\)", what="the edited statement's result")
    if "42" not in text:
        fail("arrow-key edit did not give 42:\n" + text)
    if "SYNTAX" in text or "[D" in text:
        fail("escape codes reached the SQL:\n" + text)
    s.expect(r"quereus> ")
    # Up recalls the last line.
    s.send("\x1b[A\r")
    text = s.expect(r"\(1 row\)", what="the recalled statement")
    if "42" not in text:
        fail("Up did not recall the last statement:\n" + text)
    s.expect(r"quereus> ")

    # 2. A table that must survive the interrupt; TAB completion of a keyword and a table.
    s.send("create table widgets (id integer primary key, label text);\r")
    s.expect(r"quereus> ")
    s.send("insert into widgets values (1, 'a'), (2, 'b');\r")
    s.expect(r"quereus> ")
    s.send("sel\t count(*) as n from wid\t;\r")
    text = s.expect(r"\(1 row\)", what="the completed statement")
    if not re.search(r"\b2\b", text) or "Error" in text:
        fail("TAB completion did not give 'select … from widgets':\n" + text)
    s.expect(r"quereus> ")
    s.send("select lab\t from widgets where widgets.i\t = 2;\r")
    text = s.expect(r"\(1 row\)", what="the statement with completed columns")
    if not re.search(r"\bb\b", text) or "Error" in text:
        fail("TAB completion of columns did not give 'select label … widgets.id':\n" + text)
    s.expect(r"quereus> ")
    s.send(".tab\t\r")
    text = s.expect(r"widgets", what=".tables through completion")
    s.expect(r"quereus> ")

    # 3. Ctrl-C at the prompt drops the line (and a statement being continued).
    s.send("select 'never")
    s.read_for(0.3)
    s.send("\x03")
    s.expect(r"quereus> ", what="a fresh prompt after Ctrl-C")
    s.send("select 7 as w;\r")
    text = s.expect(r"\(1 row\)", what="a statement after Ctrl-C")
    if "never" in text.split("w")[-1] or "Error" in text:
        fail("Ctrl-C did not clear the line:\n" + text)
    s.expect(r"quereus> ")
    s.send("select 1 +\r")
    s.expect(r"\.\.\.> ", what="the continuation prompt")
    s.send("\x03")
    s.expect(r"quereus> ", what="the prompt after Ctrl-C in a continued statement")

    # 4. Ctrl-C during a long query interrupts it; the shell and its tables live on.
    s.send("with recursive c(n) as (select 1 union all select n + 1 from c where n < 100000) "
           "select count(*) from c a join c b on a.n <> b.n;\r")
    s.read_for(1.5)
    started = time.time()
    s.send("\x03")
    text = s.expect(r"INTERRUPT", timeout=20, what="the interrupted query's error")
    if time.time() - started > 10:
        fail("the interrupt took too long")
    s.expect(r"quereus> ", what="the prompt after the interrupt")
    s.send("select count(*) as n from widgets;\r")
    text = s.expect(r"\(1 row\)", what="the table after the interrupt")
    if not re.search(r"\b2\b", text):
        fail("the table did not survive the interrupt:\n" + text)
    s.expect(r"quereus> ")

    # 4a. Inside an explicit transaction the interrupted statement is undone and the
    # transaction stays open: what came before it commits.
    s.send("begin;\r")
    s.expect(r"quereus> ")
    s.send("insert into widgets values (3, 'c');\r")
    s.expect(r"quereus> ")
    s.send("with recursive c(n) as (select 1 union all select n + 1 from c where n < 100000) "
           "insert into widgets select a.n * 100000 + b.n + 10, 'x' from c a join c b on a.n <> b.n;\r")
    s.read_for(1.5)
    s.send("\x03")
    s.expect(r"INTERRUPT", timeout=20, what="the interrupted insert")
    s.expect(r"quereus> ")
    s.send("commit;\r")
    text = s.expect(r"quereus> ", what="the commit after the interrupt")
    if "Error" in text:
        fail("the transaction did not survive the interrupt:\n" + text)
    s.send("select count(*) as n from widgets;\r")
    text = s.expect(r"\(1 row\)", what="the rows after the commit")
    if not re.search(r"\b3\b", text):
        fail("the transaction's insert was lost, or the interrupted one kept:\n" + text)
    s.expect(r"quereus> ")

    # 4b. Ctrl-C during .read of a long script of short statements stops the script.
    script = os.path.join(tmp, "many.sql")
    with open(script, "w") as f:
        f.write("create table many (n integer primary key);\n")
        for i in range(20000):  # about 1 ms each
            f.write(f"insert into many select {i} where (with recursive c(n) as (select 1 union all "
                    f"select n + 1 from c where n < 5000) select count(*) from c) > 0;\n")
    s.send(f".read {script}\r")
    s.read_for(1.5)
    s.send("\x03")
    s.expect(r"INTERRUPT", timeout=20, what="the interrupted .read")
    s.expect(r"quereus> ", what="the prompt after the interrupted .read")
    s.send("select count(*) < 20000 as stopped from many;\r")
    text = s.expect(r"\(1 row\)", what="the rows of the interrupted .read")
    if "true" not in text:
        fail(".read went on after Ctrl-C:\n" + text)
    s.expect(r"quereus> ")

    # 5. A ';' inside a string and a comment does not end the statement.
    s.send("select 'a;b' as t -- c;d\r")
    s.expect(r"\.\.\.> ", what="continuation after ';' in a string and comment")
    s.send(";\r")
    text = s.expect(r"\(1 row\)", what="the string with ';'")
    if "a;b" not in text:
        fail("the ';' in a string was taken as the end:\n" + text)
    s.expect(r"quereus> ")

    # 6. A pasted line far over the terminal's 4 KB line limit arrives whole.
    s.send("select length('" + "x" * 10000 + "') as n;\r")
    text = s.expect(r"\(1 row\)", timeout=30, what="the long line's result")
    if "10000" not in text:
        fail("a 10 000-character line was cut:\n" + text[-500:])
    s.expect(r"quereus> ")

    # 7. .quit leaves with status 0 and the history file holds the lines.
    s.send(".quit\r")
    s.read_for(2)
    _, status = os.waitpid(s.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        fail(f"the shell did not exit 0 (status {status})")
    with open(hist, encoding="utf-8", errors="replace") as f:
        history = f.read()
    if "widgets" not in history:
        fail("the history file does not hold the session's lines:\n" + history)
    print("ok: pty shell test passed")


if __name__ == "__main__":
    signal.alarm(120)
    main()
