"""A writer without SQLiteTriggers: Python's sqlite3 module edits a device's
notes (distinct notes, a transaction each) and journals the version each edit
left, read back after the file's own rules stamped it.

    python3 python_writer.py DEVICE_DB DEVICE WRITER EDITS SEED JOURNAL
"""
import json
import random
import sqlite3
import sys
import time

path, device, writer, edits, seed, journal = sys.argv[1:7]
rng = random.Random(int(seed))
db = sqlite3.connect(path, timeout=30, isolation_level=None)
ROW = ("SELECT json_object('id', id, 'title', title, 'body', body, 'editedBy', editedBy, "
       "'updatedAt', updatedAt, 'deleted', 0) FROM notes WHERE id = ?")
with open(journal, "a") as out:
    for edit in range(int(edits)):
        db.execute("BEGIN IMMEDIATE")
        ids = [row[0] for row in db.execute("SELECT id FROM notes ORDER BY id")]
        roll = rng.randrange(10)
        text = f"{writer} #{edit}"
        if not ids or roll < 3:
            note = "%016x" % rng.getrandbits(64)
            db.execute("INSERT INTO notes(id, title, body, editedBy) VALUES (?, ?, ?, ?)",
                       (note, f"title by {text}", f"body by {text}", writer))
            line = db.execute(ROW, (note,)).fetchone()[0]
        elif roll < 8:
            note = rng.choice(ids)
            db.execute("UPDATE notes SET title = ?, editedBy = ? WHERE id = ?", (f"title by {text}", writer, note))
            line = db.execute(ROW, (note,)).fetchone()[0]
        else:
            note = rng.choice(ids)
            db.execute("DELETE FROM notes WHERE id = ?", (note,))
            stamp = db.execute("SELECT time FROM sqlitetriggers_changes WHERE kind = 'delete' "
                               "ORDER BY id DESC LIMIT 1").fetchone()[0]
            line = json.dumps({"id": note, "editedBy": f"~deleted-by-{device}", "deleted": 1, "updatedAt": stamp})
        db.execute("COMMIT")
        out.write(line + "\n")
        time.sleep(0.002)
