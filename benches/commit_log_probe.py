"""What a commit log could reach on this disk: records written and fdatasynced one at a time.

    python3 benches/commit_log_probe.py [DIR] [--rounds 2]

For 4, 16 and 64 KiB records it prints records per second written over a preallocated file
whose blocks are already written (what a reused log does) and appended to a fresh file. The
4 KiB overwrite is the probe `zarrdb bench --workload group_commit` divides by.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

LOG_BYTES = 64 << 20


def rate(path: str, size: int, preallocated: bool, records: int = 2000) -> float:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if preallocated:
            block = b"\0" * (1 << 20)
            for i in range(LOG_BYTES >> 20):
                os.pwrite(fd, block, i << 20)
            os.fsync(fd)
        record = os.urandom(size)
        offset = 0
        start = time.perf_counter()
        for _ in range(records):
            os.pwrite(fd, record, offset)
            os.fdatasync(fd)
            offset = (offset + size) % LOG_BYTES
        return records / (time.perf_counter() - start)
    finally:
        os.close(fd)
        os.remove(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", default=tempfile.gettempdir())
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    path = os.path.join(args.dir, "commit_log_probe.bin")
    for _ in range(args.rounds):
        for size in (4096, 16384, 65536):
            over = rate(path, size, True)
            fresh = rate(path, size, False)
            print(f"{size:6d} B records: {over:8.0f}/s over a written file, {fresh:8.0f}/s appended", flush=True)


if __name__ == "__main__":
    main()
