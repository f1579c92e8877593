"""A downstream connection without a server, for the sink's unit tests: it records the
statements it is given and raises the errors a test asks for."""


class FakeCursor:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        err = self.conn.fail(sql, args) if self.conn.fail else None
        if err is not None:
            raise err
        self.conn.sql.append(sql if args is None else (sql, args))

    def fetchall(self):
        return self.conn.rows

    def fetchone(self):
        return self.conn.rows[0] if self.conn.rows else None


class FakeConn:
    def __init__(self, fail=None, rows=()):
        self.sql, self.fail, self.rows, self.closed = [], fail, list(rows), False

    def cursor(self):
        return FakeCursor(self)

    def close(self):
        self.closed = True


def failing(errors):
    """A fail() that raises the given errors in turn, then lets statements through."""
    errors = list(errors)

    def fail(sql, args):
        return errors.pop(0) if errors else None
    return fail
