"""Every exported function of the loadable library is safe to call first:
before any connection loaded it (its SQLite routines table is still empty),
each call returns an error code or a harmless answer, and never crashes.
Each call runs in a process of its own, so a crash fails just its check.
The list of functions is read from the library itself (nm -D), so a new
export without a case here fails too."""
import subprocess
import sys

import checks

# What each function is called with, first thing in a new process.  DB is
# a real connection from the system libsqlite3 that never loaded us; the
# library's own functions are called on it before any .load.
CALLS = {
    "sqlite3_sqlitetriggers_init": None,   # SQLite's own entry point: it gets the routines table
    "sqlitetriggers_register": "L.sqlitetriggers_register(DB)",
    "sqlitetriggers_register_v2": "L.sqlitetriggers_register_v2(DB, ctypes.byref(ctypes.c_char_p()))",
    "sqlitetriggers_pin_clock": "L.sqlitetriggers_pin_clock(DB, ctypes.c_int64(0))",
    "sqlitetriggers_unpin_clock": "L.sqlitetriggers_unpin_clock(DB)",
    "sqlitetriggers_seed_random": "L.sqlitetriggers_seed_random(DB, ctypes.c_int64(1))",
    "sqlitetriggers_unseed_random": "L.sqlitetriggers_unseed_random(DB)",
    "sqlitetriggers_set_clock": "L.sqlitetriggers_set_clock(DB, None, None, None)",
    "sqlitetriggers_uuidv7": "L.sqlitetriggers_uuidv7(ctypes.create_string_buffer(16))",
    "sqlitetriggers_event_seq": "L.sqlitetriggers_event_seq(None)",
    "sqlitetriggers_event_transaction": "L.sqlitetriggers_event_transaction(None)",
    "sqlitetriggers_event_name": "L.sqlitetriggers_event_name(None)",
    "sqlitetriggers_event_argc": "L.sqlitetriggers_event_argc(None)",
    "sqlitetriggers_event_type": "L.sqlitetriggers_event_type(None, 0)",
    "sqlitetriggers_event_int64": "L.sqlitetriggers_event_int64(None, 0)",
    "sqlitetriggers_event_double": "L.sqlitetriggers_event_double(None, 0)",
    "sqlitetriggers_event_text": "L.sqlitetriggers_event_text(None, 0)",
    "sqlitetriggers_event_blob": "L.sqlitetriggers_event_blob(None, 0)",
    "sqlitetriggers_event_bytes": "L.sqlitetriggers_event_bytes(None, 0)",
    "sqlitetriggers_observe_immediate": "L.sqlitetriggers_observe_immediate(DB, b'x', None, None, None, None)",
    "sqlitetriggers_observe_after_commit": "L.sqlitetriggers_observe_after_commit(DB, b'x', None, None, None, None)",
    "sqlitetriggers_observe_after_commit_batch": "L.sqlitetriggers_observe_after_commit_batch(DB, b'x', None, None, None, None)",
    "sqlitetriggers_unobserve": "L.sqlitetriggers_unobserve(DB, ctypes.c_int64(1))",
    "sqlitetriggers_deliver": "L.sqlitetriggers_deliver(DB)",
    "sqlitetriggers_undelivered_count": "L.sqlitetriggers_undelivered_count(DB)",
    "sqlitetriggers_set_callback_log_capacity": "L.sqlitetriggers_set_callback_log_capacity(DB, 5)",
    "sqlitetriggers_wakeup_open": "L.sqlitetriggers_wakeup_open(b'README.md', ctypes.byref(H)); "
                                  "L.sqlitetriggers_wakeup_drain(H); L.sqlitetriggers_wakeup_close(H)",
    "sqlitetriggers_wakeup_fd": "L.sqlitetriggers_wakeup_fd(None)",
    "sqlitetriggers_wakeup_drain": "L.sqlitetriggers_wakeup_drain(None)",
    "sqlitetriggers_wakeup_wait": "L.sqlitetriggers_wakeup_wait(None, 0)",
    "sqlitetriggers_wakeup_close": "L.sqlitetriggers_wakeup_close(None)",
    "sqlitetriggers_wakeup_pause": "L.sqlitetriggers_wakeup_pause(None)",
    "sqlitetriggers_wakeup_resume": "L.sqlitetriggers_wakeup_open(b'README.md', ctypes.byref(H)); "
                                    "L.sqlitetriggers_wakeup_pause(H); L.sqlitetriggers_wakeup_resume(H); "
                                    "L.sqlitetriggers_wakeup_resume(None); L.sqlitetriggers_wakeup_close(H)",
    "sqlitetriggers_wakeup_name": "L.sqlitetriggers_wakeup_name(b'README.md', ctypes.create_string_buffer(64), 64)",
}

PROLOGUE = """
import ctypes, ctypes.util
S = ctypes.CDLL(ctypes.util.find_library('sqlite3'))
L = ctypes.CDLL({library!r})
L.sqlitetriggers_event_name.restype = ctypes.c_char_p
DB = ctypes.c_void_p()
assert S.sqlite3_open(b':memory:', ctypes.byref(DB)) == 0
H = ctypes.c_void_p()
result = {call}
print('returned', result)
"""


def run():
    exported = subprocess.run(["nm", "-D", "--defined-only", checks.library_path()],
                              capture_output=True, text=True, check=True).stdout.split()
    names = sorted(name for name in exported if name.startswith(("sqlitetriggers_", "sqlite3_sqlitetriggers")))
    mismatches = []
    for name in names:
        if name not in CALLS:
            mismatches.append(f"{name}: exported, but no case here calls it first")
            continue
        if CALLS[name] is None:
            continue
        script = PROLOGUE.format(library=checks.library_path(), call=CALLS[name])
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        if done.returncode != 0:
            mismatches.append(f"{name} called first: exit {done.returncode} {done.stderr.strip()[-200:]}")
    checks.check("every exported function is safe to call before any connection loaded the library",
                 mismatches, len(names))
