"""SIGKILL a Python process inside ``with store.transaction()``, many times: the database holds
every transaction whole or not at all, never loses an acknowledged one, and passes
``zarrdb check``.

The writer is ``crash_child.write_transactions`` in a child process (transaction n writes arrays
a, b, c, an attribute and sometimes a new array, so a partial transaction makes them disagree).
For each kill the parent picks a transaction (one of the next three) and a moment in it: right
after one of the child's progress messages (begun, a written, b written, c written, all written)
or a random delay after it began, within about one transaction's duration. Where the kill landed
is read from the child's messages afterwards; the share that landed inside a transaction (after
"begun", before "committed") is printed (`pytest -s`) and at least one must have.

CI runs ZARRDB_CRASH_KILLS kills on redb (default 30) and half as many on LMDB and on LMDB behind
zarrdb's commit log (``commit_log=True``; the parent then opens it writable without the log, which
recovers the log's records and removes its files, before it checks); set it higher
for a long campaign, and ZARRDB_CRASH_SEED to vary or replay the choices (default 15).
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from crash_child import check_state, fork_server, initialise, write_transactions
from zarrdb_cli import cli

from zarrdb import ZarrdbStore

FORK_SERVER = fork_server()
KILLS = int(os.environ.get("ZARRDB_CRASH_KILLS", "30"))
SEED = int(os.environ.get("ZARRDB_CRASH_SEED", "15"))
# A child that sends nothing for this long fails the test.
WATCHDOG_SECONDS = 60
# Progress messages that mean "inside transaction n": begun and not yet acknowledged as committed.
INSIDE = ("B", "a", "b", "c", "attr", "extra", "W")
TRIGGERS = ("B", "a", "b", "c", "W", "delay")


@dataclass
class Kill:
    """What one kill found."""

    start: int  # the state the child started from
    acknowledged: int  # the last transaction the child reported committed
    last_message: tuple[str, int]  # the child's last progress message
    found: int  # the transaction the database holds afterwards

    @property
    def inside(self) -> bool:
        return self.last_message[0] in INSIDE


def _kill_once(
    path: Path, backend: str, commit_log: bool, rng: random.Random, txn_seconds: list[float]
) -> Kill:
    receiver, sender = FORK_SERVER.Pipe(duplex=False)
    child = FORK_SERVER.Process(
        target=write_transactions, args=(sender, str(path), backend, False, 0, commit_log), daemon=True
    )
    child.start()
    sender.close()  # the child's end: once it dies, reading past its messages ends

    def receive() -> tuple[str, int]:
        if not receiver.poll(WATCHDOG_SECONDS):
            raise AssertionError(f"the child sent nothing for {WATCHDOG_SECONDS} s")
        message: tuple[str, int] = receiver.recv()
        return message

    try:
        tag, start = receive()
        assert tag == "S", f"the child did not start: {tag}"
        target = start + 1 + rng.randrange(3)
        trigger = rng.choice(TRIGGERS)
        wanted = ("B" if trigger == "delay" else trigger, target)
        messages: list[tuple[str, int]] = [("C", start)]
        begun: dict[int, float] = {}
        while messages[-1] != wanted:
            tag, n = receive()
            messages.append((tag, n))
            if tag == "B":
                begun[n] = time.monotonic()
            elif tag == "C" and n in begun:
                txn_seconds.append(time.monotonic() - begun[n])
        if trigger == "delay":
            # Within about one transaction (the mean of those timed so far), so most land inside.
            mean = sum(txn_seconds) / len(txn_seconds) if txn_seconds else 0.02
            time.sleep(rng.uniform(0, 1.2 * mean))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(WATCHDOG_SECONDS)
        assert child.exitcode == -signal.SIGKILL, f"the child ended otherwise: {child.exitcode}"
        # What the child sent before it died (a message cut by the kill ends the reading).
        with contextlib.suppress(EOFError):
            while receiver.poll():
                messages.append(receiver.recv())
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
            child.join()
    acknowledged = max(n for tag, n in messages if tag == "C")
    # Behind the log: opened writable, without the log, so this open is what recovers the folder.
    store = ZarrdbStore(path, read_only=not commit_log, backend=backend)  # type: ignore[arg-type]
    found = check_state(store.snapshot())
    store.close()
    del store
    gc.collect()  # the file's handle must go, or the next child finds it locked
    return Kill(start, acknowledged, messages[-1], found)


def _check(path: Path) -> None:
    """`zarrdb check PATH`; on failure, say which processes hold the database's files and which
    locks are set on them, so that a failure seen once in CI ("locked" after a kill) tells who
    held the lock."""
    result = subprocess.run([cli(), "check", str(path)], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"{result.stderr}\n{_holders(path)}")


def _holders(path: Path) -> str:
    """The processes with a descriptor open on `path` or on a file beside it named after it, and
    the lines of /proc/locks for those files."""
    watched = {p.resolve() for p in path.parent.glob(path.name + "*")}
    inodes = {os.stat(p).st_ino for p in watched if p.exists()}
    lines = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if Path(os.readlink(fd)) in watched:
                        cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                        lines.append(f"pid {proc.name} fd {fd.name} -> {os.readlink(fd)}: {cmdline.strip()}")
    with contextlib.suppress(OSError):
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            inode = next((f for f in fields if f.count(":") == 2), None)
            if inode is not None and int(inode.rsplit(":", 1)[1]) in inodes:
                lines.append(f"lock: {line}")
    return "holders of the database's files:\n" + ("\n".join(lines) or "none")


@pytest.mark.parametrize(
    "backend, commit_log, kills",
    [("redb", False, KILLS), ("lmdb", False, max(1, KILLS // 2)), ("lmdb", True, max(1, KILLS // 2))],
)
def test_sigkill_inside_transactions(tmp_path: Path, backend: str, commit_log: bool, kills: int) -> None:
    path = tmp_path / f"crash.{backend}"
    store = ZarrdbStore(path, backend=backend, commit_log=commit_log)  # type: ignore[arg-type]
    initialise(store)
    store.close()
    del store
    gc.collect()

    rng = random.Random(SEED)
    txn_seconds: list[float] = []
    results = []
    for _ in range(kills):
        kill = _kill_once(path, backend, commit_log, rng, txn_seconds)
        results.append(kill)
        # Never less than acknowledged; more only when the kill came after every write of the
        # next transaction (its commit may have finished before the "committed" message).
        allowed = {kill.acknowledged}
        if kill.last_message == ("W", kill.acknowledged + 1):
            allowed.add(kill.acknowledged + 1)
        assert kill.found in allowed, f"{kill}: the database holds transaction {kill.found}"
        _check(path)

    inside = sum(k.inside for k in results)
    in_commit = sum(k.last_message[0] == "W" for k in results)
    committed_anyway = sum(k.found > k.acknowledged for k in results)
    print(
        f"\n{backend}{' with the commit log' if commit_log else ''}: {kills} kills, {inside} inside a transaction ({in_commit} after its last "
        f"write, {committed_anyway} of those found committed), last transaction {results[-1].found}"
    )
    assert inside >= 1, "no kill landed inside a transaction: the test proved nothing"
