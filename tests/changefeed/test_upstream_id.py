"""The upstream id: a uint64 naming the source server by what it says of itself."""

from __future__ import annotations

from cdcflow.changefeed import upstream_id
from cdcflow.core.uri import parse_source_uri


def test_a_server_uuid_names_the_server_else_server_id_host_and_port():
    mysql = {"server_uuid": "3E11FA47-71CA-11E1-9E33-C80AA9429562", "server_id": "1", "hostname": "db1",
             "port": "3306"}
    assert upstream_id.identity(mysql) == "server_uuid:3e11fa47-71ca-11e1-9e33-c80aa9429562"
    # the uuid alone: the same server under another server_id or hostname keeps its id
    assert upstream_id.identity({**mysql, "server_id": "7", "hostname": "db1.example"}) == upstream_id.identity(mysql)
    mariadb = {"server_id": "1", "hostname": "db1", "port": "3306"}  # MariaDB has no server_uuid
    assert upstream_id.identity(mariadb) == "server_id:1@db1:3306"
    assert upstream_id.identity({**mariadb, "server_uuid": ""}) == "server_id:1@db1:3306"
    ids = {upstream_id.number(upstream_id.identity(v)) for v in
           (mysql, mariadb, {**mariadb, "port": "3307"}, {**mariadb, "server_id": "2"}, {**mariadb, "hostname": "db2"})}
    assert len(ids) == 5


def test_the_id_is_a_stable_nonzero_uint64_that_fits_a_signed_column():
    n = upstream_id.number("server_id:1@db1:3306")
    assert n == upstream_id.number("server_id:1@db1:3306")
    assert 0 < n < 2 ** 63
    assert n == int.from_bytes(__import__("hashlib").sha256(b"server_id:1@db1:3306").digest()[:8], "big") >> 1


def test_a_real_server_gives_the_same_id_by_any_address(mariadb_pair):
    up, down = mariadb_pair
    by_ip = upstream_id.of_source(parse_source_uri(up.uri))
    assert by_ip != upstream_id.UNKNOWN
    assert upstream_id.of_source(parse_source_uri(up.uri.replace("127.0.0.1", "localhost"))) == by_ip
    assert upstream_id.of_source(parse_source_uri(down.uri)) != by_ip  # another server, another id
