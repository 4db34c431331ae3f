"""A stand-in for the sqlite3 command-line shell, on apsw: the shell suites
(Tests/shell) run through it against the SQLite versions Apple ships, which
come only inside apsw's wheels (Tests/python/test_apple_sqlite_versions.py).

It reads SQL and dot-commands from standard input, as `sqlite3 -batch DB`
does, and prints what sqlite3 3.40's CLI prints for what the suites use:
rows in list mode ('|' between values, NULL as nothing, numbers as SQLite
renders them, blobs as their bytes) on standard output; errors on standard
error, in order with the rows, as
"Parse error near line N: MESSAGE" when the statement did not compile and
"Runtime error near line N: MESSAGE (CODE)" when it failed running (the code
only when it is not SQLITE_ERROR), N the line the statement starts on. The
CLI's caret under a parse error is not drawn (run_shell_suites strips it
from the expectations). Dot-commands: .load, .connection N, .open, .system,
.bail, .print, .stats (its "Memory Used" line alone); anything else is an
error naming it. `-readonly` and `sqlite3 DB "SQL"` work as in the CLI.

  APSW_RECURSIVE_TRIGGERS=0|1   sets PRAGMA recursive_triggers on every
                                connection it opens (Apple's SQLite defaults
                                to ON).
"""
import os
import subprocess
import sys

import apsw


class Series:
    """generate_series(START, STOP[, STEP]), which the sqlite3 CLI builds in
    (ext/misc/series.c) and apsw does not: a table-valued function over a
    Python virtual table."""

    def Create(self, connection, module, database, table, *arguments):
        return "CREATE TABLE x(value, start HIDDEN, stop HIDDEN, step HIDDEN)", self

    Connect = Create

    def BestIndex(self, constraints, orderbys):
        # Equality on the hidden columns 1..3 become Filter's arguments, in order.
        used, plan = [None] * len(constraints), 0
        argument = 0
        for column in (1, 2, 3):
            for index, (constraint_column, operator) in enumerate(constraints):
                if constraint_column == column and operator == apsw.SQLITE_INDEX_CONSTRAINT_EQ and used[index] is None:
                    used[index] = (argument, True)
                    argument += 1
                    plan |= 1 << column
                    break
        return used, plan, None, False, 1.0 if plan & 6 == 6 else 1e12

    def Open(self):
        return SeriesCursor()

    def Disconnect(self):
        pass

    Destroy = Disconnect


class SeriesCursor:
    def Filter(self, plan, name, arguments):
        values = list(arguments)
        start = values.pop(0) if plan & 2 else 0
        stop = values.pop(0) if plan & 4 else 0xFFFFFFFF
        step = values.pop(0) if plan & 8 else 1
        self.values = iter(range(start, stop + (1 if step > 0 else -1), step or 1))
        self.step_once()

    def step_once(self):
        self.current = next(self.values, None)

    def Eof(self):
        return self.current is None

    def Next(self):
        self.step_once()

    def Rowid(self):
        return self.current

    def Column(self, number):
        return self.current

    def Close(self):
        pass


class Shell:
    def __init__(self, path, readonly=False):
        self.readonly = readonly
        self.stats = False
        self.out = bytearray()
        self.connections = {0: None}
        self.current = 0
        self.renderer = apsw.Connection(":memory:")
        try:
            self.renderer.createmodule("probe", Series(), eponymous=True)
            self.eponymous = True
        except TypeError:
            self.eponymous = False
        self.open(path)

    def open(self, path):
        flags = apsw.SQLITE_OPEN_READONLY if self.readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        connection = apsw.Connection(path, flags=flags | apsw.SQLITE_OPEN_URI)
        if self.eponymous:
            connection.createmodule("generate_series", Series(), eponymous=True)
        else:
            # apsw before 3.41 makes no eponymous module: a TEMP virtual
            # table of that name takes the same arguments.
            connection.createmodule("generate_series", Series())
            # Creating it reads the file's schema, which another process
            # may hold locked: wait for it, as the real CLI never has to.
            (getattr(connection, "set_busy_timeout", None) or connection.setbusytimeout)(20000)
            connection.cursor().execute("CREATE VIRTUAL TABLE temp.generate_series USING generate_series")
            (getattr(connection, "set_busy_timeout", None) or connection.setbusytimeout)(0)
        (getattr(connection, "enable_load_extension", None) or connection.enableloadextension)(True)
        recursive = os.environ.get("APSW_RECURSIVE_TRIGGERS")
        if recursive is not None:
            connection.cursor().execute(f"PRAGMA recursive_triggers = {int(recursive)}")
        self.connections[self.current] = connection

    @property
    def db(self):
        return self.connections[self.current]

    def text(self, value):
        if value is None:
            return b""
        if isinstance(value, bytes):
            return value
        if isinstance(value, float):
            # SQLite's own rendering (1.0e+20, 2.0), not Python's.
            value = self.renderer.cursor().execute("SELECT CAST(? AS TEXT)", (value,)).fetchone()[0]
        return str(value).encode()

    @staticmethod
    def message(error):
        """SQLite's message, without apsw's class name before it."""
        text = str(error)
        name = type(error).__name__ + ": "
        return text[len(name):] if text.startswith(name) else text

    def error(self, line, prefix, message, code=None):
        self.flush()
        suffix = f" ({code})" if code not in (None, 1) else ""
        sys.stderr.write(f"{prefix} near line {line}: {message}{suffix}\n")
        sys.stderr.flush()

    def execute(self, sql, line):
        cursor = self.db.cursor()
        stepped = []

        def trace(cursor, statement, bindings):
            stepped.append(statement)
            return True

        if hasattr(cursor, "setexectrace"):
            cursor.setexectrace(trace)
        else:
            cursor.exectrace = trace
        # sqlite3 binds NULL to a named parameter the script never set;
        # apsw refuses unbound ones unless told to take a dict's missing
        # names as NULL.
        bindings = None
        if any(mark in sql for mark in "$:@#"):
            bindings = {}
            if hasattr(apsw, "allow_missing_dict_bindings"):
                apsw.allow_missing_dict_bindings(True)
        try:
            for row in cursor.execute(sql, bindings):
                self.out += b"|".join(self.text(value) for value in row) + b"\n"
        except apsw.Error as error:
            message = self.message(error)
            code = getattr(error, "result", None)
            self.error(line, "Runtime error" if stepped else "Parse error", message, code if stepped else None)
            return False
        finally:
            if self.stats:
                # The line of the CLI's .stats that the suites read.
                used, highest = apsw.status(apsw.SQLITE_STATUS_MEMORY_USED)
                self.out += f"Memory Used:                         {used} (max {highest}) bytes\n".encode()
        return True

    def dot(self, line_text, line):
        words = line_text.split()
        command, arguments = words[0], words[1:]
        if command == ".load":
            try:
                (getattr(self.db, "load_extension", None) or self.db.loadextension)(*arguments[:2])
            except apsw.Error as error:
                self.flush()
                sys.stderr.write(f"Error: {self.message(error)}\n")
                return False
        elif command == ".connection":
            self.current = int(arguments[0])
            if self.current not in self.connections:
                self.connections[self.current] = None
                self.open(":memory:")
        elif command == ".open":
            self.open(arguments[-1])
        elif command == ".system":
            self.flush()
            subprocess.run(line_text[len(".system"):].strip(), shell=True)
        elif command == ".timeout":
            (getattr(self.db, "set_busy_timeout", None) or self.db.setbusytimeout)(int(arguments[0]))
        elif command == ".backup":
            target = apsw.Connection(arguments[-1].strip("'\""))
            with target.backup("main", self.db, "main") as backup:
                backup.step()
            target.close()
        elif command == ".bail":
            self.bail = arguments and arguments[0] == "on"
        elif command == ".stats":
            self.stats = arguments[:1] == ["on"]
        elif command == ".print":
            self.out += " ".join(arguments).encode() + b"\n"
        else:
            sys.stderr.write(f"apsw_cli: unsupported dot-command {command}\n")
            return False
        return True

    def run(self, source):
        failed = False
        self.bail = False
        pending, start = "", 0
        for number, line_text in enumerate(source.splitlines(), start=1):
            if not pending.strip() and line_text.lstrip().startswith("."):
                pending = ""
                ok = self.dot(line_text.strip(), number)
                failed = failed or not ok
                if not ok and self.bail:
                    break
                continue
            # Statements end where ';' completes one (a trigger's body holds
            # several); each is reported at the line it starts on.
            for index, character in enumerate(line_text + "\n"):
                if not pending.strip() and not character.isspace():
                    start = number
                pending += character
                if character == ";" and apsw.complete(pending):
                    ok = self.execute(pending, start)
                    failed = failed or not ok
                    pending = ""
                    if not ok and self.bail:
                        return self.finish(True)
        if pending.strip():
            ok = self.execute(pending, start)
            failed = failed or not ok
        return self.finish(failed)

    def flush(self):
        sys.stdout.buffer.write(bytes(self.out))
        sys.stdout.flush()
        self.out.clear()

    def finish(self, failed):
        self.flush()
        return 1 if failed else 0


def main():
    flags, arguments, commands = [], [], []
    words = iter(sys.argv[1:])
    for argument in words:
        if argument == "-cmd":
            # `-cmd SQL`: run before the rest, each on its own, as sqlite3 does.
            commands.append(next(words, ""))
        elif argument.startswith("-"):
            flags.append(argument)
        else:
            arguments.append(argument)
    path = arguments[0] if arguments else ":memory:"
    # `sqlite3 DB "SQL"` runs the SQL instead of standard input.
    source = arguments[1] if len(arguments) > 1 else sys.stdin.read()
    shell = Shell(path, readonly="-readonly" in flags)
    for command in commands:
        shell.run(command)
    sys.exit(shell.run(source))


if __name__ == "__main__":
    main()
